package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// createRequestID is the request id of the prefix's applied CREATE_GROUP.
func createRequestID(t *testing.T, c *coordinator.Coordinator, p string) string {
	t.Helper()
	for _, e := range auditEvents(c, p, "CREATE_GROUP") {
		if e.Outcome == "SUCCESS" {
			return e.RequestID
		}
	}
	t.Fatalf("no applied CREATE_GROUP for %s: %+v", p, auditEvents(c, p))
	return ""
}

// TestAccGroup_lostCreateAdoptedAfterConsumersJoined: consumers that start
// before their group exists join within seconds of the create, and every
// join raises metadataVersion (CONTRACT §4). A create whose answer is lost
// and whose group two consumers joined before the read-back is still proven
// this create's (the count it sent, no migration history) and adopted
// (issue 23 §2).
func TestAccGroup_lostCreateAdoptedAfterConsumersJoined(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "drops the create's answer and lets consumers join before the read-back")
	p, g := acctest.RandomName("lostjoin"), "svc"
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultResetAfterApply})
	c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteGroup, Kind: coordinator.FaultDelay, OnMatch: func() {
		a.env.JoinSilentMember(t, p, g)
		a.env.JoinSilentMember(t, p, g)
	}})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 3"),
			Check: resource.ComposeTestCheckFunc(
				a.diags.ExpectWarning("Adopted a group whose create response was lost", "no migration history", "consumers that joined since"),
				a.expectGroup(p, g, shardCountIs(3)),
				func(*terraform.State) error {
					if n := c.RequestCount("POST", coordinator.RouteGroup); n != 1 {
						return fmt.Errorf("want the lost create only (no re-send), got %d POSTs", n)
					}
					return nil
				},
			),
		}},
	})
}

// TestAccGroup_lostCreateWithoutCountIsNotAdopted: a create that sent no
// count (a new prefix, no initial_shard_count) proves nothing by the count
// of the group found after its lost answer: it is not adopted, and the error
// says what is known, the create's request id, how to find it in the audit
// log and the import command; the next plan does what it says (issue 24 §8).
func TestAccGroup_lostCreateWithoutCountIsNotAdopted(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "drops the create's answer")
	p, g := acctest.RandomName("lostnocount"), "svc"
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultResetAfterApply})
	config := a.env.ProviderConfig() + groupHCL("test", p, g)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ExpectError: regexp.MustCompile(`(?s)` + words("sent no initial shard count") + `.*` + words("it was not adopted") + `.*CREATE_GROUP.*requestId.*` +
					words("redis-stream-coordinator.audit") + ".*" + words("fails with \"Group already exists\"") + ".*" +
					words("terraform import redisstreamcoordinator_group.<name> "+p+"/"+g)),
			},
			{
				// What the error said the next plan does.
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)Group already exists.*` + words("terraform import")),
			},
		},
	})
	id := createRequestID(t, c, p)
	if errs := strings.Join(a.diags.Errors(), "\n"); !strings.Contains(errs, id) {
		t.Fatalf("the error does not name the create's request id %s:\n%s", id, errs)
	}
	if n := c.RequestCount("POST", coordinator.RouteGroup); n != 1 {
		t.Fatalf("want the lost create only, got %d POSTs", n)
	}
}

// TestAccGroup_lostCreateWhoseReadBackFailsKeepsItsRequestID: the create's
// answer is lost and the read-back is refused: the error names the create's
// request id (not the read's), and says truthfully what the next plan does.
func TestAccGroup_lostCreateWhoseReadBackFailsKeepsItsRequestID(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "drops the create's answer and refuses the read-back")
	p, g := acctest.RandomName("lostread"), "svc"
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultResetAfterApply})
	c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteGroup, Kind: coordinator.FaultRespond, Status: 403,
		ErrorCode: "FORBIDDEN", Message: "Access denied"})
	config := a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 2")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ExpectError: regexp.MustCompile(`(?s)FORBIDDEN.*` + words("reading the group back to settle it failed") + ".*" +
					words("Nothing was recorded in Terraform state. The next plan lists the coordinator's groups")),
			},
			{
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)Group already exists`),
			},
		},
	})
	id := createRequestID(t, c, p)
	if errs := strings.Join(a.diags.Errors(), "\n"); !strings.Contains(errs, "request id "+id) {
		t.Fatalf("the error does not name the create's request id %s:\n%s", id, errs)
	}
}
