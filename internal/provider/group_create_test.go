package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

func init() {
	// The settle bound is the coordinator's critical-section bound; the
	// in-repo coordinator has no such queue, and whether a group is still
	// there after the bound does not depend on its length in these tests
	// (they delete it, or not, through hooks), so keep the tests fast.
	createSettleBound = 20 * time.Millisecond
}

// TestAccGroup_provisioningFailureOnFirstCreateExplained: 503
// REDIS_STREAM_PROVISIONING_FAILED on a prefix's first create is reported as
// the provisioning failure with the keys it may have left and how to clear
// them (issue 11.1).
func TestAccGroup_provisioningFailureOnFirstCreateExplained(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "injects the provisioning failure that only a Redis-backed coordinator produces")
	p := acctest.RandomName("provfail")
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultRespond, Status: 503, Times: 20,
		ErrorCode: "REDIS_STREAM_PROVISIONING_FAILED", Message: "XGROUP CREATE failed for " + p + ":2: OOM command not allowed"})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig("max_retries = 0") + groupHCL("test", p, "svc", "initial_shard_count = 4"),
			ExpectError: regexp.MustCompile(`(?s)REDIS_STREAM_PROVISIONING_FAILED.*OOM command not allowed.*` + words("first group and deleted the group's metadata again") +
				".*" + words(p+":0 … "+p+":3") + `.*STREAM_PREFIX_ALREADY_EXISTS.*` + words("did not re-send") + ".*" + words("redis-cli UNLINK "+p)),
		}},
	})
}

// TestAccGroup_lostCreateThatLandsLateIsOurs: the create's answer is lost and
// the group is not visible yet (still queued); the re-send meets 409
// GROUP_ALREADY_EXISTS. The group matches this create and is still there
// after the settle bound, so it is adopted as this run's own, never with an
// "import it" error (issue 11.5).
func TestAccGroup_lostCreateThatLandsLateIsOurs(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "drops the create's answer and hides the group from the first read")
	p, g := acctest.RandomName("late"), "svc"
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultResetAfterApply})
	c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteGroup, Kind: coordinator.FaultRespond, Status: 404,
		ErrorCode: "GROUP_NOT_FOUND", Message: "Group not found"})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 3"),
			Check: resource.ComposeTestCheckFunc(
				a.diags.ExpectWarning("Adopted a group whose create response was lost", "409 GROUP_ALREADY_EXISTS", "landed meanwhile"),
				a.expectGroup(p, g, shardCountIs(3)),
				func(*terraform.State) error {
					creates := auditEvents(c, p, "CREATE_GROUP")
					if len(creates) != 2 || creates[0].Outcome != "SUCCESS" || creates[1].Outcome == "SUCCESS" {
						return fmt.Errorf("want the applied create and the refused re-send, got %+v", creates)
					}
					return nil
				},
			),
		}},
	})
}

// TestAccGroup_lostCreateDeletedAgainIsNotAdopted: the group of a lost create
// is visible, then deleted again by the coordinator (its provisioning
// failed): it is not adopted, and the error says why (issue 11.5).
func TestAccGroup_lostCreateDeletedAgainIsNotAdopted(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "drops the create's answer and deletes the group during the settle window")
	p, g := acctest.RandomName("rolledback"), "svc"
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultResetAfterApply})
	// First read: the group is there. Second read (after the settle bound):
	// the coordinator has deleted it again, as a failed provisioning does.
	c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteGroup, Kind: coordinator.FaultDelay})
	c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteGroup, Kind: coordinator.FaultDelay, Delay: time.Minute,
		Until: func() bool {
			_, err := a.env.Client().DeleteGroup(ctxT(t), p, g, true, client.Mutation{Reason: "provisioning failed (simulated)"})
			return err == nil
		}})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 3"),
			ExpectError: regexp.MustCompile(`(?s)` + words("lost create was rolled back by the coordinator") + ".*" + words("deleted again") +
				`.*REDIS_STREAM_PROVISIONING_FAILED.*` + words("nothing was adopted") + ".*" + words(p+":0 … "+p+":2")),
		}},
	})
}

// TestAccGroup_createAnsweredByGeneric500IsReadBackBeforeResending: a create
// answered by Spring's generic 500 (no errorCode: a store or mutex failure)
// is ambiguous: the provider reads the group back and, finding none, sends
// the same create again (issue 11.4).
func TestAccGroup_createAnsweredByGeneric500IsReadBackBeforeResending(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "answers the create with a generic 500")
	p, g := acctest.RandomName("generic500"), "svc"
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultRespond, Status: 500,
		ContentType: "application/json",
		Body:        `{"timestamp":"2026-01-01T00:00:00.000+00:00","status":500,"error":"Internal Server Error","path":"/coord/v1/streams/x/groups/y"}`})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig("max_retries = 0") + groupHCL("test", p, g, "initial_shard_count = 2"),
			Check: resource.ComposeTestCheckFunc(
				func(*terraform.State) error {
					if n := c.RequestCount("POST", coordinator.RouteGroup); n != 2 {
						return fmt.Errorf("want the 500-answered create and one re-send, got %d POSTs", n)
					}
					if n := c.RequestCount("GET", coordinator.RouteGroup); n < 1 {
						return fmt.Errorf("the group was not read back before the re-send")
					}
					if creates := auditEvents(c, p, "CREATE_GROUP"); len(creates) != 1 {
						return fmt.Errorf("want exactly one applied CREATE_GROUP, got %+v", creates)
					}
					return nil
				},
				a.expectGroup(p, g, shardCountIs(2)),
			),
		}},
	})
}

// words matches the words of s in order, across the line wrapping of
// Terraform's diagnostics.
func words(s string) string {
	parts := strings.Fields(s)
	for i, w := range parts {
		parts[i] = regexp.QuoteMeta(w)
	}
	return strings.Join(parts, `\s+`)
}
