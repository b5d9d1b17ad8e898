package provider

import (
	"context"
	"fmt"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
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
	// Queued as the scale arrives: the provider's next two listings are the
	// read-back's and the take-over's.
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteStreamScale, Kind: coordinator.FaultResetAfterApply,
		OnMatch: finishAtSecondListing(c, p, g, 3)})
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

// Campaign seed 989385417 (issue 30): a shard count change whose own group
// has no migration, in a prefix where another group's migration heads to
// another count. The plan says the change "waits for" that migration "to
// finish first"; the apply does: the executor reads the prefix, sees the
// migration heading elsewhere (prefix.Decide: wait for others), waits for
// it, reads the prefix again and sends one stream scale. Nothing is sent
// that the coordinator would refuse (before the model, a stream scale was
// sent, refused with 409 ACTIVE_MIGRATION_EXISTS, and the take-over refused
// the prefix without waiting).
//
// Forced with the coordinator's hooks: an undrained removed shard holds
// group "b"'s 4→3 migration in DRAINING. Once the plan is made (PreApply),
// the fourth groups listing after it drains the shard and ticks the loop:
// by then the apply is waiting (its re-plan, the executor's read and the
// wait's first read come first), and every later listing serves the wait.
func TestAccGroupShardCount_refusedScaleWaitsForAnotherGroupsMigration(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds another group's migration and finishes it while the provider waits")
	p := acctest.RandomName("waitother")
	arm := duringTheWaitForB(t, a, c, p, nil)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", p, "a", 2),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				// A new resource: its preview is known after apply.
				plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
				arm,
			}},
			ConfigStateChecks: expectShardCountState(2, "DEPRECATED"),
			Check: resource.ComposeTestCheckFunc(
				a.migrationFinished(p, "a", 2), a.migrationFinished(p, "b", 2),
				// One stream scale, sent after the wait: none refused.
				func(*terraform.State) error {
					if events := terraformMutations(c, p, "SCALE_STREAM"); len(events) != 1 || events[0].Outcome != coordinator.OutcomeSuccess {
						return fmt.Errorf("want one stream scale, accepted, after the wait; got %+v", events)
					}
					if events := terraformMutations(c, p, "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(events) != 0 {
						return fmt.Errorf("want no per-group scale or rollback; got %+v", events)
					}
					return nil
				},
			),
		}},
	})
}

// Review of issue 30, finding 1: the executor checks the basis on every
// record it reads, not only the first. The apply waits for another group's
// migration (as above); while it waits, a third group appears in the prefix
// at another count. Before the fix the apply read the prefix again and sent
// a stream scale that rescaled the new group too, which no plan showed; now
// it refuses as a stale plan, names the group, and sends nothing.
func TestAccGroupShardCount_groupAppearingDuringTheWaitMakesThePlanStale(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds another group's migration and adds a group while the provider waits")
	p := acctest.RandomName("waitstale")
	var created error
	arm := duringTheWaitForB(t, a, c, p, func() {
		shards := int32(4)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, created = a.env.Client().CreateGroup(ctx, p, "c", &shards, client.Mutation{Reason: "a third team joins the prefix"})
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", p, "a", 2),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				// A new resource: its preview is known after apply.
				plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
				arm,
			}},
			ExpectError: regexp.MustCompile(`(?s)Stale plan: the groups of stream prefix.*changed during the apply.*"c"\s+\(4\s+shards\)\s+appeared`),
		}},
	})
	if created != nil {
		t.Fatalf("creating group c while the provider waited: %v", created)
	}
	if events := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(events) != 0 {
		t.Errorf("want nothing sent after the prefix changed; got %+v", events)
	}
	if g, err := a.group(t, p, "c"); err != nil || g.ShardCount != 4 || !g.ActiveMigration.Finished() {
		t.Errorf("group c: want 4 shards, untouched; got %+v, %v", g, err)
	}
}

// Review of issue 30, finding 3: a per-group scale whose answer is lost,
// read back as not applied, lands late: the re-send (same request id) meets
// 409 ACTIVE_MIGRATION_EXISTS for the migration the first send started.
// The 409 is read back like a lost answer: the migration heads to the
// target, so the apply adopts it. Before the fix the 409 was the outcome
// and the apply failed on a scale that had happened.
//
// Group "a" has a scale-out to 6 under way (no consumer: it stays ACTIVE),
// "b" is at 4: the apply takes the prefix over, adopts "a"'s migration and
// scales "b" with the per-group endpoint. That scale's first send is reset
// before it is applied; the re-send's hook applies it just before the
// re-send arrives (the first send, landing late).
func TestAccGroupShardCount_lostGroupScaleLandingLateIsAdopted(t *testing.T) {
	testGroupScaleRefusedForAMigrationToTheTarget(t, true)
}

// Review of issue 30 (second round), finding 3: the same 409 on the first
// send of a per-group scale, for a migration to the target another actor
// started after the take-over read the group, is adopted too (CONTRACT §9:
// if the active migration already targets the desired count, adopt it).
func TestAccGroupShardCount_groupScaleRefusedForAnotherActorsMigrationToTheTargetIsAdopted(t *testing.T) {
	testGroupScaleRefusedForAMigrationToTheTarget(t, false)
}

// testGroupScaleRefusedForAMigrationToTheTarget: lost, the first send of
// b's scale is reset before it is applied and b's scale lands just before
// the re-send; otherwise it lands just before the first send.
func testGroupScaleRefusedForAMigrationToTheTarget(t *testing.T, lost bool) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "lands a per-group scale just before the provider's own")
	p := acctest.RandomName("latescale")
	a.createGroupOutOfBand(t, p, "a", 4)
	a.createGroupOutOfBand(t, p, "b", 4)
	if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "a", 6, client.Mutation{Reason: "another team scales its group"}); err != nil {
		t.Fatal(err)
	}
	var landed error
	scaleB := coordinator.Fault{Method: "POST", Path: "/coord/v1/streams/" + p + "/groups/b/scale"}
	reset, late := scaleB, scaleB
	reset.Kind = coordinator.FaultResetBeforeApply
	late.Kind = coordinator.FaultDelay
	late.OnMatch = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, landed = a.env.Client().ScaleGroup(ctx, p, "b", 6, client.Mutation{Reason: "a scale of b to 6, landing first"})
	}
	if lost {
		c.InjectFault(reset)
	}
	c.InjectFault(late)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", p, "a", 6),
			Check: resource.ComposeTestCheckFunc(
				resource.TestCheckResourceAttr(shardCountAddr, "shard_count", "6"),
				func(s *terraform.State) error {
					if landed != nil {
						return fmt.Errorf("landing the scale of b: %v", landed)
					}
					g, err := a.group(t, p, "b")
					if err != nil {
						return err
					}
					if g.ActiveMigration == nil || g.ActiveMigration.ToShardCount != 6 {
						return fmt.Errorf("want b's migration to 6 under way; got %+v", g)
					}
					// The migration that landed is the one recorded.
					return resource.TestCheckResourceAttr(shardCountAddr, "migration_ids.b", g.ActiveMigration.ReshardingID)(s)
				},
				func(*terraform.State) error {
					// A reset first send never reached the handler: the
					// audit log has the refused send only, and nothing
					// after it.
					events := terraformMutations(c, p, "SCALE_GROUP", "SCALE_STREAM", "ROLLBACK_MIGRATION")
					if len(events) != 1 || events[0].Status != 409 {
						return fmt.Errorf("want the refused send of b's scale, and nothing more; got %+v", events)
					}
					return nil
				},
			),
		}},
	})
}

// Review of issue 30 (second round), finding 1: a group that appears while
// the apply waits, with a PREPARING migration to the target (another
// team's per-group scale whose provisioning failed), is a change too: a
// PREPARING migration never moves by itself, and resuming it would be a
// scale no plan showed. The apply refuses as a stale plan and sends
// nothing to it.
func TestAccGroupShardCount_groupAppearingPreparingDuringTheWaitIsNotResumed(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds another group's migration and adds a PREPARING group while the provider waits")
	p := acctest.RandomName("movedprep")
	var created, scaled error
	arm := duringTheWaitForB(t, a, c, p, func() {
		shards := int32(4)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, created = a.env.Client().CreateGroup(ctx, p, "c", &shards, outOfBandMutation())
		c.FailProvisioning(coordinator.ProvisioningFault{StreamPrefix: p, ConsumerGroup: "c", Operation: coordinator.ProvisionScale, Times: 100})
		_, scaled = a.env.Client().ScaleGroup(ctx, p, "c", 2, outOfBandMutation())
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", p, "a", 2),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				// A new resource: its preview is known after apply.
				plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
				arm,
			}},
			ExpectError: regexp.MustCompile(`(?s)Stale plan: the groups of stream prefix.*changed during the apply.*"c"\s+\(4\s+shards\)\s+appeared`),
		}},
	})
	c.ClearProvisioningFaults()
	if created != nil {
		t.Fatalf("creating group c: %v", created)
	}
	if client.ErrorCode(scaled) != client.CodeRedisStreamProvisioningFailed {
		t.Fatalf("out-of-band scale of c: %v, want 503 REDIS_STREAM_PROVISIONING_FAILED", scaled)
	}
	if events := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(events) != 0 {
		t.Errorf("want nothing sent after the prefix changed; got %+v", events)
	}
}

// Review of issue 30 (second round), finding 2: a stream scale whose answer
// is lost had been applied part-way (group "b"'s provisioning failed: it
// stays PREPARING), and group "c" appeared in the prefix just before it, at
// the old count (the scale stopped at "b"). The read-back finds the scale
// applied; the take-over would resume "b" and scale "c" with the per-group
// endpoint, but its basis check finds "c", which no plan showed, and sends
// nothing more. The apply fails as a stale plan that says the scale was
// applied, and state records the migration it started: the next plan
// repairs the split prefix. Before the fix the error said nothing was
// sent and state kept no migration.
func TestAccGroupShardCount_lostStreamScaleAppliedInAMovedPrefixIsRecorded(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "adds a group just before a stream scale, fails it part-way and drops its answer")
	p := acctest.RandomName("lostmoved")
	a.createGroupOutOfBand(t, p, "a", 4)
	a.createGroupOutOfBand(t, p, "b", 4)
	// a's 4→2 migration stays DRAINING through the apply, whatever the
	// machine's speed: the read-back finds it under way.
	c.SetUndrainedShard(p, "a", 3, true)
	var created error
	arm := betweenPlanAndApply(func() {
		c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteStreamScale, Kind: coordinator.FaultResetAfterApply, OnMatch: func() {
			shards := int32(4)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, created = a.env.Client().CreateGroup(ctx, p, "c", &shards, outOfBandMutation())
			c.FailProvisioning(coordinator.ProvisioningFault{StreamPrefix: p, ConsumerGroup: "b", Operation: coordinator.ProvisionScale})
		}})
	})
	config := a.env.ProviderConfig() + shardCountHCL("test", p, "a", 2)
	var aMigration string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p, "a", 4)},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{arm}},
				ExpectError: regexp.MustCompile(`(?s)Stale plan: the groups of stream prefix.*changed during the apply.*"c"\s+\(4\s+shards\)\s+appeared.*` +
					words("had been applied, at least in part")),
			},
			{
				// The state the failed apply recorded: a's migration from
				// the lost scale, the wait pending. (Released and completed
				// first: the refresh records no migration under way.)
				PreConfig: func() {
					c.SetUndrainedShard(p, "a", 3, false)
					waitForMigrationDone(t, a, p, "a")
				},
				RefreshState:       true,
				ExpectNonEmptyPlan: true, // the split prefix: the repair below
				Check: func(s *terraform.State) error {
					if created != nil {
						return fmt.Errorf("creating group c: %v", created)
					}
					h, err := a.env.Client().Migrations(ctxT(t), p, "a")
					if err != nil {
						return err
					}
					if len(h.Migrations) != 1 {
						return fmt.Errorf("want a's one migration, from the lost scale; got %+v", h.Migrations)
					}
					aMigration = h.Migrations[0].ReshardingID
					return resource.TestCheckResourceAttr(shardCountAddr, "migration_ids.a", aMigration)(s)
				},
			},
			{
				// The next plan repairs the split prefix: b resumed, c scaled.
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("plan_check"), knownvalue.StringExact(planCheckSplit)),
				}},
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, "a", 2), a.migrationFinished(p, "b", 2), a.migrationFinished(p, "c", 2),
					func(*terraform.State) error {
						// One stream scale, whose answer was lost; then the
						// repair's per-group scales of b and c.
						if events := terraformMutations(c, p, "SCALE_STREAM"); len(events) != 1 {
							return fmt.Errorf("want the one stream scale whose answer was lost; got %+v", events)
						}
						if events := terraformMutations(c, p, "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(events) != 2 {
							return fmt.Errorf("want the repair's two per-group scales (b, c); got %+v", events)
						}
						return nil
					},
				),
			},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

// Review of issue 30 (third round), findings 1 and 2: whatever stops the
// take-over after this apply's own stream scale landed, what the scale
// started is recorded in state and the error says it was applied. Three
// ways, each with group "b"'s provisioning failing (the scale is part-way:
// "a" ACTIVE 4→2, "b" PREPARING) and group "c" appearing just before it:
//   - lost: the scale's answer is lost; the read-back finds it applied and
//     the take-over's basis check finds "c" (above, ...IsRecorded);
//   - retried: the 503 REDIS_STREAM_PROVISIONING_FAILED is retried by the
//     client and refused with 409; the decision made again takes over, and
//     the basis check finds "c";
//   - blocked: the answer is lost and, before the read-back, "c" is scaled
//     to 3 (held DRAINING by an undrained shard): the take-over refuses the
//     migration heading elsewhere.
//
// Before the fix the last two said nothing was sent or changed, and state
// kept no migration.
func TestAccGroupShardCount_partWayStreamScaleStoppedByTheTakeOverIsRecorded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault coordinator.FaultKind
		c3    bool // scale c to 3 before the read-back
		want  string
	}{
		{"retried", coordinator.FaultDelay, false, `(?s)Stale plan: the groups of stream prefix.*changed during the apply.*"c"\s+\(4\s+shards\)\s+appeared`},
		{"blocked", coordinator.FaultResetAfterApply, true, `(?s)has a resharding in progress to another shard count`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAccTest(t, acctest.Options{})
			c := a.env.RequireInRepo(t, "adds a group just before a stream scale and fails it part-way")
			p := acctest.RandomName("partrec")
			a.createGroupOutOfBand(t, p, "a", 4)
			a.createGroupOutOfBand(t, p, "b", 4)
			// a's 4→2 migration stays DRAINING through the apply: the
			// take-over finds it under way, whatever the machine's speed.
			c.SetUndrainedShard(p, "a", 3, true)
			var created, scaled error
			arm := betweenPlanAndApply(func() {
				c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteStreamScale, Kind: tc.fault, OnMatch: func() {
					shards := int32(4)
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					_, created = a.env.Client().CreateGroup(ctx, p, "c", &shards, outOfBandMutation())
					c.FailProvisioning(coordinator.ProvisioningFault{StreamPrefix: p, ConsumerGroup: "b", Operation: coordinator.ProvisionScale})
					if tc.c3 {
						// Served before the read-back: the provider's next
						// listing of the groups runs this first.
						c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultDelay, OnMatch: func() {
							ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
							defer cancel()
							c.SetUndrainedShard(p, "c", 3, true)
							_, scaled = a.env.Client().ScaleGroup(ctx, p, "c", 3, outOfBandMutation())
						}})
					}
				}})
			})
			config := a.env.ProviderConfig() + shardCountHCL("test", p, "a", 2)
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: a.factories(),
				Steps: []resource.TestStep{
					{Config: a.env.ProviderConfig() + shardCountHCL("test", p, "a", 4)},
					{
						Config:           config,
						ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{arm}},
						ExpectError:      regexp.MustCompile(tc.want + `.*` + words("had been applied, at least in part")),
					},
					{
						// The state the failed apply recorded: a's migration.
						PreConfig: func() {
							c.SetUndrainedShard(p, "a", 3, false)
							if tc.c3 {
								c.SetUndrainedShard(p, "c", 3, false)
								waitForMigrationDone(t, a, p, "c")
							}
							waitForMigrationDone(t, a, p, "a")
						},
						RefreshState:       true,
						ExpectNonEmptyPlan: true,
						Check: func(s *terraform.State) error {
							if created != nil || scaled != nil {
								return fmt.Errorf("setup: %v, %v", created, scaled)
							}
							h, err := a.env.Client().Migrations(ctxT(t), p, "a")
							if err != nil {
								return err
							}
							if len(h.Migrations) != 1 {
								return fmt.Errorf("want a's one migration, from this apply's scale; got %+v", h.Migrations)
							}
							if events := terraformMutations(c, p, "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(events) != 0 {
								return fmt.Errorf("want no per-group scale or rollback; got %+v", events)
							}
							return resource.TestCheckResourceAttr(shardCountAddr, "migration_ids.a", h.Migrations[0].ReshardingID)(s)
						},
					},
				},
			})
		})
	}
}

// duringTheWaitForB creates groups "a" and "b" of prefix p at 4 shards and
// starts b's 4→3 migration, held DRAINING by an undrained removed shard
// (another team's scale). The plan check it returns, once the plan is made,
// lets the apply's first three groups listings pass (its re-plan, the
// executor's read, the wait's first read) and, at the fourth, runs during
// (nil: nothing) and then finishes b's migration: the apply is waiting for
// it by then, and every later listing serves the wait.
func duringTheWaitForB(t *testing.T, a *accTest, c *coordinator.Coordinator, p string, during func()) betweenPlanAndApply {
	t.Helper()
	a.createGroupOutOfBand(t, p, "a", 4)
	a.createGroupOutOfBand(t, p, "b", 4)
	c.SetUndrainedShard(p, "b", 3, true)
	if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "b", 3, outOfBandMutation()); err != nil {
		t.Fatal(err)
	}
	return betweenPlanAndApply(func() {
		for i := 0; i < 3; i++ {
			c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultDelay})
		}
		c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultDelay, OnMatch: func() {
			if during != nil {
				during()
			}
			c.SetUndrainedShard(p, "b", 3, false)
			c.Tick() // ACTIVE → DRAINING, or DRAINING → DEPRECATED
			c.Tick() // DRAINING → DEPRECATED, or nothing left to do
		}})
	})
}

// finishAtSecondListing is an OnMatch hook for the request after which the
// provider lists the groups twice: it serves the first listing as is, and
// just before the second it drains shard of group g and ticks the loop, so
// g's migration, held by that undrained shard, is finished in between.
func finishAtSecondListing(c *coordinator.Coordinator, p, g string, shard int) func() {
	finish := func() {
		c.SetUndrainedShard(p, g, shard, false)
		c.Tick() // ACTIVE → DRAINING, or DRAINING → DEPRECATED
		c.Tick() // DRAINING → DEPRECATED, or nothing left to do
	}
	return func() {
		c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultDelay})
		c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultDelay, OnMatch: finish})
	}
}

// The run's journal (planRegistry's scales) keeps a per-group scale that
// reached the coordinator and strikes one whose one send was refused before
// any change (a 404 for a group that is gone) or never sent (the operation
// ended): only the run's own steps explain a sibling's move to a create of
// the same run.
func TestScaleGroupJournal(t *testing.T) {
	ctx := context.Background()
	_, api := inRepoClient(t)
	four := int32(4)
	g0, err := api.CreateGroup(ctx, "journal", "g0", &four, client.Mutation{RequestedBy: "test", Reason: "journal"})
	if err != nil {
		t.Fatal(err)
	}
	var diags diag.Diagnostics
	s := testScaler(api, "journal", "g0", 6, &diags)
	s.planned = map[string]int64{"g0": 4}

	ghost := client.Group{StreamPrefix: "journal", ConsumerGroup: "ghost", ShardCount: 4}
	if _, err := s.scaleGroup(ctx, ghost); !client.IsNotFound(err) {
		t.Fatalf("scale of a missing group: %v, want a 404", err)
	}
	if s.plans.explains("journal", "g0", 4, 6) {
		t.Fatal("a scale refused with 404 stayed journaled")
	}

	ended, cancel := context.WithCancel(ctx) // the operation ended (an interrupt)
	cancel()
	if _, err := s.scaleGroup(ended, *g0); err == nil {
		t.Fatal("a scale after the operation ended was sent")
	}
	if s.plans.explains("journal", "g0", 4, 6) {
		t.Fatal("a scale never sent stayed journaled")
	}

	if _, err := s.scaleGroup(ctx, *g0); err != nil {
		t.Fatal(err)
	}
	if !s.plans.explains("journal", "g0", 4, 6) {
		t.Fatal("the run's own scale does not explain g0's move from 4 to 6")
	}
	if s.plans.explains("journal", "g0", 4, 8) || s.plans.explains("other", "g0", 4, 6) {
		t.Fatal("the scale explains a move to another count, or in another prefix")
	}
}

// testScaler is a scaler with the run's memory, reader and watcher of its own.
func testScaler(api *client.Client, p, g string, target int32, diags *diag.Diagnostics) *scaler {
	return &scaler{providerData: newProviderData(api, settleTiming{}), p: p, g: g, target: target, diags: diags}
}

// A take-over whose second per-group scale fails returns what it did
// before: the migration it adopted and the scale it sent, which apply
// records in state (so the next plan, without a refresh, does not take
// them for another actor's). Group a is under way to 8 (a per-group scale
// out of band), b and c are at 4; c's scale is refused (422).
func TestTakeOverFailingPartWayReturnsWhatItDid(t *testing.T) {
	ctx := context.Background()
	c, api := inRepoClient(t)
	four := int32(4)
	m := client.Mutation{RequestedBy: "test", Reason: "partial"}
	for _, g := range []string{"a", "b", "c"} {
		if _, err := api.CreateGroup(ctx, "partial", g, &four, m); err != nil {
			t.Fatal(err)
		}
	}
	adopted, err := api.ScaleGroup(ctx, "partial", "a", 8, m)
	if err != nil {
		t.Fatal(err)
	}
	c.InjectFault(coordinator.Fault{Method: "POST", Path: "/coord/v1/streams/partial/groups/c/scale", Kind: coordinator.FaultRespond,
		Status: 422, ErrorCode: "VALIDATION_FAILED", Message: "refused", Times: 10})
	var diags diag.Diagnostics
	s := testScaler(api, "partial", "a", 8, &diags)
	s.mutation = m
	out := s.start(ctx)
	if !diags.HasError() {
		t.Fatalf("the take-over succeeded although c's scale was refused: %v", diags)
	}
	if out == nil || out.migrations["a"].ReshardingID != adopted.ReshardingID || out.migrations["b"].ToShardCount != 8 || len(out.migrations) != 2 {
		t.Fatalf("the failed take-over returned %+v; want a's adopted migration and b's scale", out)
	}
}

// inRepoClient is an in-repo coordinator served for the test, and a client
// of it as its admin.
func inRepoClient(t *testing.T) (*coordinator.Coordinator, *client.Client) {
	t.Helper()
	c := coordinator.New(coordinator.Options{AdminPassword: "unit-pass"})
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	api, err := client.New(client.Config{Endpoint: srv.URL, Username: "admin", Password: "unit-pass"})
	if err != nil {
		t.Fatal(err)
	}
	return c, api
}
