package provider

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// Issue 30 item 4: every lost answer is settled by one rule
// (prefix.Settle). These tests cover what the rule changed at a call site:
// a delete whose read-back fails is sent again (a delete is idempotent for
// the rule); the re-send of a rollback or of a per-group scale is read back
// like the first send, not taken as the outcome; a create is sent at most
// prefix.MaxResends times more.

// readBackRefused is the 403 a read-back gets: the coordinator answers, so
// the client does not retry it, and the outcome stays unknown.
func readBackRefused(method, route string) coordinator.Fault {
	return coordinator.Fault{Method: method, Route: route, Kind: coordinator.FaultRespond, Status: http.StatusForbidden,
		ErrorCode: "FORBIDDEN", Message: "Access denied"}
}

// expectRequests: the coordinator received n requests for method and route.
func expectRequests(c *coordinator.Coordinator, method, route string, n int) func(*terraform.State) error {
	return func(*terraform.State) error {
		if got := c.RequestCount(method, route); got != n {
			return fmt.Errorf("%s %s reached the coordinator %d times, want %d", method, route, got, n)
		}
		return nil
	}
}

// expectApplied: the audit log has exactly n successful action events sent
// by Terraform for prefix p.
func expectApplied(c *coordinator.Coordinator, p, action string, n int) func(*terraform.State) error {
	return func(*terraform.State) error {
		var ok int
		for _, e := range terraformMutations(c, p, action) {
			if e.Outcome == "SUCCESS" {
				ok++
			}
		}
		if ok != n {
			return fmt.Errorf("want %d successful %s from Terraform, the audit log has %+v", n, action, terraformMutations(c, p, action))
		}
		return nil
	}
}

// TestAccGroup_lostDeleteWhoseReadBackFailsIsSentAgain: the destroy's
// delete is applied and its answer lost; reading the group back is refused
// (403). The delete is sent again with the same request id and answers 404
// GROUP_NOT_FOUND, which the contract reads as "already gone": the destroy
// succeeds. Before the one rule, a failed read-back ended the delete with the
// lost answer as an error, although the group was gone.
func TestAccGroup_lostDeleteWhoseReadBackFailsIsSentAgain(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "applies the delete, loses its answer and refuses the read-back")
	p, g := acctest.RandomName("lostdelread"), "svc"
	provider := a.env.ProviderConfig()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: provider + groupHCL("test", p, g, "initial_shard_count = 2", `deletion_policy = "DELETE"`)},
			{
				PreConfig: func() {
					// The read-back's GET is refused: the fault is queued as
					// the delete arrives, so refresh reads are served as is.
					c.InjectFault(coordinator.Fault{Method: http.MethodDelete, Route: coordinator.RouteGroup, Kind: coordinator.FaultResetAfterApply,
						OnMatch: func() { c.InjectFault(readBackRefused(http.MethodGet, coordinator.RouteGroup)) }})
				},
				Config: provider,
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error {
						if _, err := a.group(t, p, g); !client.IsNotFound(err) {
							return fmt.Errorf("the group must be gone, reading it gave %v", err)
						}
						return nil
					},
					expectRequests(c, http.MethodDelete, coordinator.RouteGroup, 2),
					expectApplied(c, p, "DELETE_GROUP", 1),
				),
			},
		},
	})
}

// TestAccGroupShardCount_lostRollbackResendIsReadBack: rollback_on_revert
// rolls back group a's migration; a proxy answers the first rollback with a
// 502 (not applied), the read-back shows the migration ACTIVE, and the
// re-send is applied with its answer lost. That answer is read back too
// (ROLLED_BACK), so the rollback is settled and the revert goes on with
// group b. Before the one rule, a re-sent rollback's answer was the outcome,
// and its lost answer failed the apply.
func TestAccGroupShardCount_lostRollbackResendIsReadBack(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "loses the answers to the rollback and to its re-send")
	p := acctest.RandomName("lostroll")
	a.createGroupOutOfBand(t, p, "a", 3)
	a.createGroupOutOfBand(t, p, "b", 3)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			PreConfig: func() {
				scaleOutOfBand(t, a, p, 6)
				c.ResetRequestCounts()
				c.InjectFault(notApplied(http.MethodPost, coordinator.RouteRollback))
				c.InjectFault(coordinator.Fault{Method: http.MethodPost, Route: coordinator.RouteRollback, Kind: coordinator.FaultResetAfterApply})
			},
			Config:            a.env.ProviderConfig() + shardCountHCL("test", p, "a", 3, "rollback_on_revert = true"),
			ConfigStateChecks: expectShardCountState(3, "ROLLED_BACK"),
			Check: resource.ComposeTestCheckFunc(
				a.migrationFinished(p, "a", 3),
				a.migrationFinished(p, "b", 3),
				a.diags.ExpectWarning("Rolled back the resharding"),
				// a's rollback twice (the 502, the lost re-send), b's once.
				expectRequests(c, http.MethodPost, coordinator.RouteRollback, 3),
				expectApplied(c, p, "ROLLBACK_MIGRATION", 2),
			),
		}},
	})
}

// TestAccGroupShardCount_lostPerGroupScaleResendIsReadBack: the apply takes
// over a prefix whose group a is already migrating to the target, scaling
// group b with the per-group scale. A proxy answers b's scale with a 502
// (not applied); the read-back shows b unchanged; the re-send is applied and
// its answer lost, and that is read back too: b's migration to the target
// is adopted and waited for. Before the one rule, the re-send's lost answer
// failed the apply.
func TestAccGroupShardCount_lostPerGroupScaleResendIsReadBack(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds a's migration and loses the answers to b's scale and to its re-send")
	p := acctest.RandomName("lostgroupscale")
	a.createGroupOutOfBand(t, p, "a", 2)
	a.createGroupOutOfBand(t, p, "b", 2)
	c.SetUndrainedShard(p, "a", 1, true) // a's migration stays under way until the provider waits for it
	if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "a", 1, outOfBandMutation()); err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			PreConfig: func() {
				c.ResetRequestCounts()
				c.InjectFault(notApplied(http.MethodPost, coordinator.RouteGroupScale))
				c.InjectFault(coordinator.Fault{Method: http.MethodPost, Route: coordinator.RouteGroupScale, Kind: coordinator.FaultResetAfterApply})
				go drainOnceWaiting(t, c, p, "a", 1)
			},
			Config:            a.env.ProviderConfig() + shardCountHCL("test", p, "a", 1),
			ConfigStateChecks: expectShardCountState(1, "DEPRECATED"),
			Check: resource.ComposeTestCheckFunc(
				a.migrationFinished(p, "a", 1),
				a.migrationFinished(p, "b", 1),
				expectRequests(c, http.MethodPost, coordinator.RouteGroupScale, 2),
				expectApplied(c, p, "SCALE_GROUP", 1),
			),
		}},
	})
}

// TestAccGroup_lostCreateStopsAtTheResendLimit: a proxy answers every
// create with a 502 (not applied) and each read-back finds no group. The
// create is sent prefix.MaxResends times more with the same request id, and
// then the apply stops, saying what the read-backs found and what the next
// plan does; the next apply, with the proxy healthy, creates the group.
// Before the one rule the create had its own limit, and was sent a fourth
// time.
func TestAccGroup_lostCreateStopsAtTheResendLimit(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "answers every create with a proxy's 502")
	p, g := acctest.RandomName("lostcreatelimit"), "svc"
	sends := prefix.MaxResends + 1
	f := notApplied(http.MethodPost, coordinator.RouteGroup)
	f.Times = sends + 1 // one more than the provider may send
	c.InjectFault(f)
	config := a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 2")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				PreConfig: c.ResetRequestCounts,
				Config:    config,
				ExpectError: regexp.MustCompile(`(?s)Failed to create group.*502.*` + words("was sent 3 times, and none of its answers settled it: after each, reading the group back found no group") + ".*" +
					words("if it does not, it plans the create again")),
			},
			{
				PreConfig: func() {
					if n := c.RequestCount(http.MethodPost, coordinator.RouteGroup); n != sends {
						t.Errorf("the create was sent %d times, want %d", n, sends)
					}
					c.ClearFaults()
				},
				Config: config,
				Check:  a.expectGroup(p, g, shardCountIs(2)),
			},
		},
	})
}
