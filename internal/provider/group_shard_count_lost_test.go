package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// Issue 30: a scale whose answer was lost is read back while its migration
// is under way, and the migration finishes before the take-over that
// follows reads the prefix again (what a coordinator restart mid-apply did in
// TestAccReliability_coordinatorRestartMidApply on a busy machine). The
// apply records the migration it adopted, in its final state, and the group
// as it last read it: the plan after the apply, without a refresh (the
// first one terraform-plugin-testing makes) and with one, is empty. Before
// the fix it recorded no migration and the group as the read-back saw it,
// migration under way, so the non-refresh plan waited for that migration
// again.
//
// The interleaving is forced with the coordinator's hooks, no timing: an
// undrained removed shard holds the 4→2 migration in DRAINING; the scale's
// answer is dropped after it is applied; the provider's next listing of the
// groups (the read-back) is served as is, and just before the one after it
// (the take-over's) the shard is drained and the loop ticked until the
// migration is DEPRECATED.
func TestAccGroupShardCount_lostScaleFinishedBetweenReadBackAndTakeOver(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "drops the 202 of the scale and finishes its migration between two listings")
	p, g := acctest.RandomName("lostdone"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	c.SetUndrainedShard(p, g, 3, true)
	finish := func() {
		c.SetUndrainedShard(p, g, 3, false)
		c.Tick() // ACTIVE → DRAINING, or DRAINING → DEPRECATED
		c.Tick() // DRAINING → DEPRECATED, or nothing left to do
	}
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteStreamScale, Kind: coordinator.FaultResetAfterApply,
		OnMatch: func() {
			// Queued as the scale arrives: the provider's next two listings
			// are the read-back's and the take-over's.
			c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultDelay})
			c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultDelay, OnMatch: finish})
		}})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:            a.env.ProviderConfig() + shardCountHCL("test", p, g, 2),
			ConfigStateChecks: expectShardCountState(2, "DEPRECATED"),
			Check: resource.ComposeTestCheckFunc(
				a.migrationFinished(p, g, 2),
				a.diags.ExpectWarning("The answer to the scale of stream prefix", "had been applied"),
				resource.TestCheckResourceAttr(shardCountAddr, "previous_shard_count", "4"),
				// The migration recorded is the one the lost scale started.
				func(s *terraform.State) error {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					h, err := a.env.Client().Migrations(ctx, p, g)
					if err != nil {
						return err
					}
					if len(h.Migrations) != 1 || h.Migrations[0].State != "DEPRECATED" {
						return fmt.Errorf("want the one migration of the lost scale, DEPRECATED; got %+v", h.Migrations)
					}
					return resource.TestCheckResourceAttr(shardCountAddr, "migration_ids."+g, h.Migrations[0].ReshardingID)(s)
				},
				// Read back, not re-sent.
				func(*terraform.State) error {
					if events := auditEvents(c, p, "SCALE_STREAM"); len(events) != 1 {
						return fmt.Errorf("want the applied scale only, no re-send; got %+v", events)
					}
					return nil
				},
			),
		}},
	})
}
