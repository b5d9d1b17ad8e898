package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// A migration rolled back by someone else is recorded as ROLLED_BACK, not
// DEPRECATED: a null activeMigration alone does not say which (CONTRACT §4.6).
func TestAccGroupShardCount_refreshRecordsAnOutOfBandRollback(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("rolledback"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	config := a.env.ProviderConfig() + shardCountHCL("test", p, g, 4, `wait_for = "ACCEPTED"`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			// No consumer: the scale-out stays ACTIVE.
			{Config: config, Check: resource.TestCheckResourceAttr(shardCountAddr, "migration_state", "ACTIVE")},
			{
				PreConfig: func() {
					grp, err := a.group(t, p, g)
					if err != nil || grp.ActiveMigration == nil {
						t.Fatalf("no active migration to roll back: %v", err)
					}
					if _, err := a.env.Client().RollbackMigration(ctxT(t), p, g, grp.ActiveMigration.ReshardingID, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
				},
				RefreshState: true,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr(shardCountAddr, "migration_state", "ROLLED_BACK"),
					resource.TestCheckResourceAttr(shardCountAddr, "shard_count", "2"),
				),
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// Spring's generic 500 on a scale: the change may or may not have been
// committed. The provider reads the groups back and finishes the change
// without scaling twice.
func TestAccGroupShardCount_genericServerErrorOnScaleIsReadBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind coordinator.FaultKind
		// the read-back's verdict: adopted, or sent again (same request id)
		check func(t *testing.T, c *coordinator.Coordinator, a *accTest, p string) error
	}{
		{"committed", coordinator.FaultStoreErrorAfterCommit, func(t *testing.T, c *coordinator.Coordinator, a *accTest, p string) error {
			return a.diags.ExpectWarning("500 without the coordinator's errorCode", "the scale had been applied")(nil)
		}},
		{"not committed", coordinator.FaultStoreError, func(t *testing.T, c *coordinator.Coordinator, a *accTest, p string) error {
			events := auditEvents(c, p, "SCALE_STREAM")
			if len(events) != 2 || events[0].Status != 500 || events[1].Outcome != "SUCCESS" || events[0].RequestID != events[1].RequestID {
				return fmt.Errorf("want the failed scale and its re-send with the same request id, got %+v", events)
			}
			return nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAccTest(t, acctest.Options{})
			c := a.env.RequireInRepo(t, "answers the scale with a store failure")
			p, g := acctest.RandomName("store500"), "svc"
			a.createGroupOutOfBand(t, p, g, 3)
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: a.factories(),
				Steps: []resource.TestStep{{
					PreConfig: func() {
						c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteStreamScale, Kind: tc.kind})
					},
					// A scale-in without consumers completes by itself.
					Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 2),
					Check: resource.ComposeTestCheckFunc(
						a.migrationFinished(p, g, 2),
						func(*terraform.State) error { return tc.check(t, c, a, p) },
					),
				}},
			})
			// Exactly one scale took effect: the committed 500, or the
			// stream scale sent again after an uncommitted one.
			var applied int
			for _, e := range auditEvents(c, p, "SCALE_STREAM", "SCALE_GROUP") {
				if e.Outcome == "SUCCESS" {
					applied++
				}
			}
			if applied != 1 {
				t.Fatalf("want exactly one applied scale, got %d: %+v", applied, auditEvents(c, p))
			}
		})
	}
}
