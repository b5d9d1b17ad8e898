package provider

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

const shardCountAddr = "redisstreamcoordinator_group_shard_count.test"

func expectShardCountState(count int64, migrationState string) []statecheck.StateCheck {
	var state knownvalue.Check = knownvalue.Null()
	if migrationState != "" {
		state = knownvalue.StringExact(migrationState)
	}
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(count)),
		statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("migration_state"), state),
	}
}

// migrationFinished checks the coordinator itself: the group has the count
// and no active migration.
func (a *accTest) migrationFinished(p, g string, count int32) func(*terraform.State) error {
	return a.expectGroup(p, g, func(grp *client.Group) error {
		if err := shardCountIs(count)(grp); err != nil {
			return err
		}
		if grp.ActiveMigration != nil {
			return fmt.Errorf("group %s/%s still has active migration %+v", p, g, *grp.ActiveMigration)
		}
		return nil
	})
}

func TestAccGroupShardCount_scaleOutWithConvergingConsumerThenInThenZero(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("orders"), "order-service"
	config := func(n int) string {
		return a.env.ProviderConfig() + groupHCL("group", p, g, "initial_shard_count = 2") +
			shardCountHCL("test", p, g, n, "depends_on = [redisstreamcoordinator_group.group]")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				// The count already matches: nothing is sent.
				Config:            config(2),
				ConfigStateChecks: expectShardCountState(2, ""),
			},
			{
				PreConfig: func() {
					a.env.StartConsumer(t, p, g)
					waitForLiveMember(t, a, p, g)
				},
				Config: config(4),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: append(expectShardCountState(4, "DEPRECATED"),
					statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("previous_shard_count"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("migration_ids"),
						knownvalue.MapExact(map[string]knownvalue.Check{g: knownvalue.StringRegexp(regexp.MustCompile(`^reshard-`))})),
				),
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, g, 4),
					a.diags.ExpectWarning("Resharding stream prefix", "partition→shard mapping changes", "from 2 to 4"),
				),
			},
			{
				Config:            config(1),
				ConfigStateChecks: expectShardCountState(1, "DEPRECATED"),
				Check:             a.migrationFinished(p, g, 1),
			},
			{
				// 0 drains every shard; with a live consumer it completes once
				// the consumer releases them.
				Config:            config(0),
				ConfigStateChecks: expectShardCountState(0, "DEPRECATED"),
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, g, 0),
					a.diags.ExpectWarning("A count of 0 retires every shard"),
				),
			},
		},
	})
}

func TestAccGroupShardCount_scaleInWithoutConsumers(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("shrink"), "svc"
	a.createGroupOutOfBand(t, p, g, 8)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:            a.env.ProviderConfig() + shardCountHCL("test", p, g, 3),
			ConfigStateChecks: append(expectShardCountState(3, "DEPRECATED"), statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("previous_shard_count"), knownvalue.Int64Exact(8))),
			Check:             a.migrationFinished(p, g, 3),
		}},
	})
	// Destroy forgets the resource and says so; the group keeps its count.
	if err := a.diags.ExpectWarning("Shard count left as it is", "keeps 3 shards")(nil); err != nil {
		t.Fatal(err)
	}
	if grp, err := a.group(t, p, g); err != nil || grp.ShardCount != 3 {
		t.Fatalf("after destroy the group must keep 3 shards: %+v, %v", grp, err)
	}
}

func TestAccGroupShardCount_scaleOutWithoutConsumersWarnsAndSettles(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("idle"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	config := a.env.ProviderConfig() + shardCountHCL("test", p, g, 6)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				// No hang, a warning, and (checked by the framework after
				// apply) an empty plan: the state is recorded as done.
				Config:            config,
				ConfigStateChecks: expectShardCountState(6, "ACTIVE"),
				Check: resource.ComposeTestCheckFunc(
					a.diags.ExpectWarning(`Scale-out of group "svc" waits for a consumer`, "stays ACTIVE", "409 ACTIVE_MIGRATION_EXISTS"),
					a.expectGroup(p, g, func(grp *client.Group) error {
						if grp.ActiveMigration == nil || grp.ActiveMigration.State != client.MigrationActive {
							return fmt.Errorf("the coordinator's migration should still be ACTIVE, got %+v", grp.ActiveMigration)
						}
						return nil
					}),
				),
			},
			{
				// Once a consumer joins, the migration completes and a refresh records it.
				PreConfig: func() {
					a.env.StartConsumer(t, p, g)
					waitForMigrationDone(t, a, p, g)
				},
				Config:            config,
				ConfigStateChecks: expectShardCountState(6, "DEPRECATED"),
				ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

func TestAccGroupShardCount_twoGroupsOneWithoutConsumer(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("pair")
	a.createGroupOutOfBand(t, p, "busy", 2)
	a.createGroupOutOfBand(t, p, "quiet", 2)
	a.env.StartConsumer(t, p, "busy")
	waitForLiveMember(t, a, p, "busy")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", p, "busy", 4),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("migration_ids"), knownvalue.MapSizeExact(2)),
				statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("migration_state"), knownvalue.StringExact("ACTIVE")),
			},
			Check: resource.ComposeTestCheckFunc(
				a.migrationFinished(p, "busy", 4),
				a.expectGroup(p, "quiet", shardCountIs(4)),
				a.diags.ExpectWarning(`Scale-out of group "quiet" waits for a consumer`),
				a.diags.ExpectNoWarning(`Scale-out of group "busy"`),
				a.diags.ExpectWarning("also rescales the other groups of the prefix", `"quiet" (2 shards)`),
			),
		}},
	})
}

func TestAccGroupShardCount_adoptsActiveMigrationToSameTarget(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds the migration with an undrained shard until the provider waits on it")
	p, g := acctest.RandomName("adopt"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	c.SetUndrainedShard(p, g, 3, true)
	scaleOutOfBand(t, a, p, 3) // held in DRAINING
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			PreConfig: func() { go drainOnceWaiting(t, c, p, g, 3) },
			Config:    a.env.ProviderConfig() + shardCountHCL("test", p, g, 3),
			// Routing shows 3 already, yet the resource waits for the migration.
			ConfigStateChecks: append(expectShardCountState(3, "DEPRECATED"),
				statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("previous_shard_count"), knownvalue.Int64Exact(4))),
			Check: resource.ComposeTestCheckFunc(
				a.migrationFinished(p, g, 3),
				a.diags.ExpectWarning("Took over the resharding", "adopted migration reshard-"),
			),
		}},
	})
	if sent := terraformMutations(c, p); len(sent) != 0 {
		t.Fatalf("adoption must not send a mutation, but the coordinator audited %s %s", sent[0].Action, sent[0].RequestID)
	}
}

// A revert refused because the migration it would undo is DRAINING (here a
// scale-in held by an undrained shard): rollback_on_revert cannot roll it
// back (CONTRACT §4.8), the plan says why and what waiting takes, nothing is
// sent; once the shard drains and the scale-in finishes, the same
// configuration scales back as one new change.
func TestAccGroupShardCount_revertOfDrainingScaleIn(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "simulates an undrained Redis shard")
	p, g := acctest.RandomName("revertin"), "a"
	a.createGroupOutOfBand(t, p, g, 3)
	c.SetUndrainedShard(p, g, 2, true)
	scaleOutOfBand(t, a, p, 2)
	waitForGroup(t, a, p, g, migrationIn(client.MigrationDraining))
	config := a.env.ProviderConfig() + shardCountHCL("test", p, g, 3, "rollback_on_revert = true")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: config,
			ExpectError: regexp.MustCompile(`(?s)Stream prefix "` + p + `" is being resharded away from 3 shards.*group "a": migration reshard-\S+, 3→2 shards, state DRAINING.*` +
				`They\s+cannot\s+be\s+rolled\s+back:\s+migration\s+reshard-\S+\s+of\s+group\s+"a"\s+\(3→2\s+shards,\s+DRAINING\)\s+is\s+DRAINING.*only\s+while\s+it\s+is\s+ACTIVE.*` +
				`may\s+not\s+end.*removed\s+shards\s+are\s+drained.*Nothing was sent to the coordinator`),
		}, {
			PreConfig: func() {
				if sent := terraformMutations(c, p); len(sent) != 0 {
					t.Fatalf("the refused plan sent %s %s", sent[0].Action, sent[0].RequestID)
				}
				c.SetUndrainedShard(p, g, 2, false)
				waitForMigrationDone(t, a, p, g)
				a.env.StartConsumer(t, p, g) // the scale back out needs one
			},
			Config:            config,
			ConfigStateChecks: expectShardCountState(3, "DEPRECATED"),
			Check: resource.ComposeTestCheckFunc(a.migrationFinished(p, g, 3), func(*terraform.State) error {
				if sent := terraformMutations(c, p); len(sent) != 1 || sent[0].Action != "SCALE_STREAM" {
					return fmt.Errorf("want one stream scale back to 3, got %d mutations: %+v", len(sent), sent)
				}
				return nil
			}),
		}},
	})
}

// A revert beside a migration heading to the target from another count: the
// plan shows, and the apply does, prefix.Decide's steps: the migration away
// from the target is rolled back, the one heading to it is taken over, and
// nothing else is sent. (The apply used to refuse the whole revert, after a
// plan that showed it, with advice to roll back both.)
func TestAccGroupShardCount_revertBesideAMigrationToTheTarget(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "reads the audit log")
	p := acctest.RandomName("revertmix")
	a.createGroupOutOfBand(t, p, "a", 3)
	a.createGroupOutOfBand(t, p, "b", 3)
	scaleGroup := func(g string, n int32) {
		t.Helper()
		if _, err := a.env.Client().ScaleGroup(ctxT(t), p, g, n, outOfBandMutation()); err != nil {
			t.Fatal(err)
		}
	}
	// b: 3 → 2 (a scale-in with no consumer completes), then 2 → 3, a
	// scale-out with no consumer: ACTIVE, heading to 3 from 2.
	scaleGroup("b", 2)
	waitForMigrationDone(t, a, p, "b")
	scaleGroup("b", 3)
	// a: 3 → 6, ACTIVE: a change back to 3 is a revert.
	scaleGroup("a", 6)
	config := a.env.ProviderConfig() + shardCountHCL("test", p, "a", 3, "rollback_on_revert = true")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: config,
			Check: resource.ComposeTestCheckFunc(
				a.migrationFinished(p, "a", 3),
				a.diags.ExpectWarning("Resharding stream prefix", `rolls back migration reshard-`, `of group "a" (3→6 shards, ACTIVE) (rollback_on_revert)`,
					`takes over migration reshard-`, `of group "b" (2→3 shards, ACTIVE), already heading to the target`),
				a.diags.ExpectWarning("Rolled back the resharding", `rolled back reshard-`, `of group "a" (3→6)`, `took over group "b"'s migration reshard-`),
				func(*terraform.State) error {
					sent := terraformMutations(c, p)
					if len(sent) != 1 || sent[0].Action != "ROLLBACK_MIGRATION" || deref(sent[0].ConsumerGroup) != "a" {
						return fmt.Errorf("want one rollback of group a, got %d mutations: %+v", len(sent), sent)
					}
					return nil
				}),
		}},
	})
}

// A revert beside a PREPARING migration to the target: the apply resumes
// it first (the step that failed before: failing again, it leaves the
// prefix as it was), then rolls back the migration heading away. A
// rollback concerns its own group only (CONTRACT §4.8). (It used to be
// refused, naming the PREPARING migration as "resharded away".)
func TestAccGroupShardCount_revertResumesAPreparingMigrationToTheTarget(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "fails a per-group scale's provisioning, which leaves its migration PREPARING")
	p := acctest.RandomName("revertprep")
	a.createGroupOutOfBand(t, p, "a", 3)
	a.createGroupOutOfBand(t, p, "b", 3)
	if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "b", 2, outOfBandMutation()); err != nil {
		t.Fatal(err)
	}
	waitForMigrationDone(t, a, p, "b")
	// b: 2 → 3, its provisioning failed: PREPARING, still at 2.
	noRetries, err := a.noRetriesClient()
	if err != nil {
		t.Fatal(err)
	}
	c.FailProvisioning(coordinator.ProvisioningFault{StreamPrefix: p, ConsumerGroup: "b", Operation: coordinator.ProvisionScale})
	if _, err := noRetries.ScaleGroup(ctxT(t), p, "b", 3, outOfBandMutation()); err == nil {
		t.Fatal("the armed provisioning failure did not fail the scale of b")
	}
	// a: 3 → 6, ACTIVE: a change back to 3 is a revert.
	if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "a", 6, outOfBandMutation()); err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", p, "a", 3, "rollback_on_revert = true"),
			Check: resource.ComposeTestCheckFunc(
				a.migrationFinished(p, "a", 3),
				a.diags.ExpectWarning("Resharding stream prefix", `resumes migration reshard-`, `of group "b" (2→3 shards, PREPARING) with its own target`,
					`rolls back migration reshard-`, `of group "a" (3→6 shards, ACTIVE)`),
				a.diags.ExpectWarning("Rolled back the resharding", `resumed group "b"'s PREPARING migration`, `rolled back reshard-`),
				func(*terraform.State) error {
					sent := terraformMutations(c, p)
					if len(sent) != 2 || sent[0].Action != "SCALE_GROUP" || deref(sent[0].ConsumerGroup) != "b" ||
						sent[1].Action != "ROLLBACK_MIGRATION" || deref(sent[1].ConsumerGroup) != "a" {
						return fmt.Errorf("want b's resume, then a's rollback, got %d mutations: %+v", len(sent), sent)
					}
					return nil
				},
				a.expectGroup(p, "b", shardCountIs(3))),
		}},
	})
}

func TestAccGroupShardCount_revertWithAndWithoutRollback(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("revert")
	a.createGroupOutOfBand(t, p, "a", 3)
	a.createGroupOutOfBand(t, p, "b", 3)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				PreConfig:   func() { scaleOutOfBand(t, a, p, 6) },
				Config:      a.env.ProviderConfig() + shardCountHCL("test", p, "a", 3),
				ExpectError: regexp.MustCompile(`(?s)being resharded away from 3 shards.*group "a": migration reshard-.*3→6.*rollback_on_revert = true.*may\s+not\s+end.*no\s+live\s+consumer\s+never\s+does.*removed\s+shards\s+are\s+drained.*once\s+DRAINING\s+it\s+can\s+no\s+longer\s+be\s+rolled\s+back.*scales\s+back\s+to\s+3\s+shards\s+as\s+a\s+new\s+change.*POST /coord/v1/streams/` + p + `/groups/b/migrations/reshard-[^/]+/rollback`),
			},
			{
				Config:            a.env.ProviderConfig() + shardCountHCL("test", p, "a", 3, "rollback_on_revert = true"),
				ConfigStateChecks: append(expectShardCountState(3, "ROLLED_BACK"), statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("migration_ids"), knownvalue.MapSizeExact(2))),
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, "a", 3),
					a.migrationFinished(p, "b", 3),
					a.diags.ExpectWarning("Rolled back the resharding", "stranded"),
				),
			},
		},
	})
	if c := a.env.Coordinator; c != nil {
		expectAuditedByTerraform(t, auditEvents(c, p, "ROLLBACK_MIGRATION"), 2)
	}
}

func TestAccGroupShardCount_blockedByOtherMigrationThenProceeds(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "simulates undrained Redis shards")
	p, g := acctest.RandomName("blocked"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	c.SetUndrainedShard(p, g, 3, true)
	scaleOutOfBand(t, a, p, 3) // scale-in held in DRAINING by the undrained shard
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			// The blocking migration drains once the provider is waiting on
			// it (it polls assignments), not after a guessed delay.
			PreConfig:         func() { go drainOnceWaiting(t, c, p, g, 3) },
			Config:            a.env.ProviderConfig() + shardCountHCL("test", p, g, 2),
			ConfigStateChecks: append(expectShardCountState(2, "DEPRECATED"), statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("previous_shard_count"), knownvalue.Int64Exact(3))),
			Check:             a.migrationFinished(p, g, 2),
		}},
	})
}

func TestAccGroupShardCount_partWayFailedStreamScaleIsRecovered(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "fails a stream scale part-way")
	p := acctest.RandomName("partial")
	for _, g := range []string{"a", "b", "c"} {
		a.createGroupOutOfBand(t, p, g, 2)
	}
	c.FailStreamScaleAt(p, 1) // "a" goes ACTIVE, "b" stays PREPARING, "c" untouched
	// Keep the migrations from finishing before the provider has looked, or
	// the transport's retry of the 503 would simply resume "b".
	c.SetUndrainedShard(p, "a", 1, true)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			PreConfig: func() { go drainOnceWaiting(t, c, p, "a", 1) },
			Config:    a.env.ProviderConfig() + shardCountHCL("test", p, "a", 1),
			ConfigStateChecks: append(expectShardCountState(1, "DEPRECATED"),
				statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("migration_ids"), knownvalue.MapSizeExact(3))),
			Check: resource.ComposeTestCheckFunc(
				a.migrationFinished(p, "a", 1), a.migrationFinished(p, "b", 1), a.migrationFinished(p, "c", 1),
				a.diags.ExpectWarning("Took over the resharding", `adopted migration`, `resumed group "b"'s PREPARING migration`, `scaled group "c" with the per-group scale endpoint`),
			),
		}},
	})
	// "b" resumed and "c" finished through the per-group endpoint.
	expectAuditedByTerraform(t, auditEvents(c, p, "SCALE_GROUP"), 2)
}

func TestAccGroupShardCount_outOfBandRollbackDuringWait(t *testing.T) {
	// The lease outlasts any test run, so the member is live however slow
	// the machine is.
	a := newAccTest(t, acctest.Options{MemberLeaseTTL: time.Hour})
	c := a.env.RequireInRepo(t, "rolls back at the moment the provider starts waiting")
	p, g := acctest.RandomName("yanked"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	// A live but silent member keeps the scale-out ACTIVE (it never
	// converges). It has joined when JoinSilentMember returns: no wait.
	a.env.JoinSilentMember(t, p, g)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			PreConfig: func() {
				go rollbackWhenWaiting(t, a, c, p, g)
			},
			Config:      a.env.ProviderConfig() + shardCountHCL("test", p, g, 4),
			ExpectError: regexp.MustCompile(`(?s)did not complete.*migration\s+reshard-.*was\s+rolled\s+back;\s+the\s+group\s+has\s+2\s+shards\s+again`),
		}},
	})
}

func TestAccGroupShardCount_timeoutThenNextApplyResumes(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "simulates undrained Redis shards")
	p, g := acctest.RandomName("slow"), "svc"
	a.createGroupOutOfBand(t, p, g, 3)
	c.SetUndrainedShard(p, g, 2, true)
	config := a.env.ProviderConfig() + shardCountHCL("test", p, g, 2, "timeouts {\n    create = \"2s\"\n  }")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)Timed out waiting.*migration reshard-\S+ \(3→2 shards\) is DRAINING.*` + p + `:2 still hold undrained entries.*next\s+terraform apply resumes waiting`),
			},
			{
				// A failed create taints the resource; the replacement adopts
				// the unfinished migration instead of scaling again.
				PreConfig: func() { go drainOnceWaiting(t, c, p, g, 2) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionDestroyBeforeCreate)},
				},
				ConfigStateChecks: expectShardCountState(2, "DEPRECATED"),
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, g, 2),
					a.diags.ExpectWarning("Took over the resharding", "adopted migration"),
					func(*terraform.State) error {
						if scales := len(auditEvents(c, p, "SCALE_STREAM")); scales != 1 {
							return fmt.Errorf("want the one original scale, adopted on resume; got %d SCALE_STREAM events", scales)
						}
						return nil
					},
				),
			},
		},
	})
}

func TestAccGroupShardCount_updateTimeoutThenNextPlanResumes(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "simulates undrained Redis shards")
	p, g := acctest.RandomName("resume"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	config := func(n int) string {
		return a.env.ProviderConfig() + shardCountHCL("test", p, g, n, "timeouts {\n    update = \"2s\"\n  }")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(4)},
			{
				PreConfig:   func() { c.SetUndrainedShard(p, g, 3, true) },
				Config:      config(3),
				ExpectError: regexp.MustCompile(`(?s)Timed out waiting.*is DRAINING.*` + p + `:3 still hold undrained entries`),
			},
			{
				// State records the new count and the unfinished migration;
				// the plan proposes an update that resumes the wait.
				PreConfig: func() { go drainOnceWaiting(t, c, p, g, 3) },
				Config:    config(3),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("migration_state")),
					},
				},
				ConfigStateChecks: expectShardCountState(3, "DEPRECATED"),
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, g, 3),
					a.diags.ExpectWarning("Resuming an unfinished resharding wait"),
				),
			},
		},
	})
}

// An unfinished wait, then wait_for switched to ACCEPTED: the apply does
// not wait, but records the migration as it finds it, so the plan leaves
// migration_state and metadata_version unknown whatever wait_for says. A
// plan that kept them known (as it did but for COMPLETION) failed with
// "Provider produced inconsistent result after apply" when the migration
// moved on between the plan and the apply (adversarial review, stop 39).
func TestAccGroupShardCount_unfinishedWaitThenAcceptedRecordsWhatTheApplyFinds(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "simulates undrained Redis shards and ticks a migration to its end")
	p, g := acctest.RandomName("accept"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	config := func(n int, waitFor string) string {
		return a.env.ProviderConfig() + shardCountHCL("test", p, g, n, fmt.Sprintf("wait_for = %q", waitFor), "timeouts {\n    update = \"2s\"\n  }")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(4, waitForCompletion)},
			{
				PreConfig:   func() { c.SetUndrainedShard(p, g, 3, true) },
				Config:      config(3, waitForCompletion),
				ExpectError: regexp.MustCompile(`(?s)Timed out waiting.*is DRAINING.*` + p + `:3 still hold undrained entries`),
			},
			{
				Config: config(3, waitForAccepted),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("migration_state")),
						plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("metadata_version")),
						// The world moves between the plan and the apply: the
						// migration the refresh saw DRAINING completes.
						planCheckFunc(func(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
							c.SetUndrainedShard(p, g, 3, false)
							for range 200 {
								if grp, err := a.group(t, p, g); err == nil && grp.ActiveMigration.Finished() {
									return
								}
								c.Tick()
							}
							resp.Error = fmt.Errorf("the migration of %s/%s did not complete after 200 ticks", p, g)
						}),
					},
				},
				ConfigStateChecks: expectShardCountState(3, "DEPRECATED"),
				Check:             a.migrationFinished(p, g, 3),
			},
		},
	})
}

// An unfinished wait whose migrations completed before the next plan: that
// plan resumes the wait with the resharding record of the last change
// (affected_groups as they were before it), which is not this plan's basis.
// Its apply sends nothing and finishes; it is never refused as stale because
// the prefix's groups now have the count the last change gave them.
func TestAccGroupShardCount_resumedWaitOfAFinishedStreamScaleIsNotStale(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "simulates undrained Redis shards")
	p, g, other := acctest.RandomName("resumed"), "svc", "audit"
	a.createGroupOutOfBand(t, p, g, 4)
	a.createGroupOutOfBand(t, p, other, 4)
	config := func(n int) string {
		return a.env.ProviderConfig() + shardCountHCL("test", p, g, n, "timeouts {\n    update = \"2s\"\n  }")
	}
	finish := func() {
		c.SetUndrainedShard(p, g, 3, false)
		for i := 0; i < 100; i++ {
			gs, err := a.group(t, p, g)
			ot, oerr := a.group(t, p, other)
			if err == nil && oerr == nil && gs.ActiveMigration == nil && ot.ActiveMigration == nil {
				return
			}
			c.Tick()
		}
		t.Errorf("the migrations of %s did not finish", p)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(4)},
			{
				PreConfig:   func() { c.SetUndrainedShard(p, g, 3, true) },
				Config:      config(3),
				ExpectError: regexp.MustCompile(`(?s)Timed out waiting.*is DRAINING.*` + p + `:3 still hold undrained entries`),
			},
			{
				PreConfig: finish,
				Config:    config(3),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: expectShardCountState(3, "DEPRECATED"),
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, g, 3),
					a.migrationFinished(p, other, 3),
					a.diags.ExpectWarning("Resuming an unfinished resharding wait"),
					func(*terraform.State) error {
						if scales := len(auditEvents(c, p, "SCALE_STREAM")); scales != 1 {
							return fmt.Errorf("want the one scale of the timed-out apply; got %d SCALE_STREAM events", scales)
						}
						return nil
					},
				),
			},
			{Config: config(3), PlanOnly: true},
		},
	})
}

// The same resumed wait when only the resource's own group has finished: the
// wait it resumes covers every group of the prefix, so its apply waits for the
// sibling still under way (and sends nothing) instead of reporting the
// resharding complete. The sibling's consumer stalls until something reads
// the sibling's assignments, which only a wait for it does (its look for
// invariant violations, once the migration lingered violationsEvery; plans
// and refreshes read the prefix's listing). A third group, deleted by the same
// apply, is no longer waited for, and the migration ids the plan showed stay
// as planned.
func TestAccGroupShardCount_resumedWaitWaitsForTheSiblingsStillUnderWay(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "injects a hook on a request")
	p, g, other := acctest.RandomName("resumed"), "svc", "audit"
	a.createGroupOutOfBand(t, p, g, 2)
	a.createGroupOutOfBand(t, p, other, 2)
	a.env.StartConsumer(t, p, g)
	stalled := a.env.StartStalledConsumer(t, p, other)
	// A third group, managed here, is deleted by the apply that resumes.
	gone := groupHCL("gone", p, "gone", `initial_shard_count = 2`, `deletion_policy = "DELETE"`, `force_delete = true`)
	config := func(n int, timeout string) string {
		c := a.env.ProviderConfig() + shardCountHCL("test", p, g, n, "timeouts {\n    update = \""+timeout+"\"\n  }")
		if timeout == "2s" {
			c += gone
		}
		return c
	}
	ownFinished := func() {
		waitForMigrationDone(t, a, p, g)
		if ot, err := a.group(t, p, other); err != nil || ot.ActiveMigration == nil {
			t.Fatalf("group %s/%s should still be under way: %+v %v", p, other, ot, err)
		}
		c.InjectFault(coordinator.Fault{Method: http.MethodGet, Path: "/coord/v1/monitoring/streams/" + p + "/groups/" + other + "/assignments", Kind: coordinator.FaultDelay, OnMatch: func() {
			// The new consumer joins before the stalled one leaves: the
			// group never lacks a live consumer (a scale-out without one
			// ends the wait with a warning).
			joined := a.env.StartConsumer(t, p, other)
			for deadline := time.Now().Add(time.Minute); !joined.Joined() && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			stalled.Stop()
		}})
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(2, "2s")},
			{
				Config:      config(4, "2s"),
				ExpectError: regexp.MustCompile(`(?s)Timed out waiting.*group "audit".*is ACTIVE`),
			},
			{
				PreConfig: ownFinished,
				Config:    config(4, "60s"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
						// What the resumed wait finds (a sibling's consumers
						// may have left since) is the apply's to record.
						plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("completes_by_itself")),
						plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("blocked_by")),
					},
				},
				ConfigStateChecks: append(expectShardCountState(4, "DEPRECATED"),
					// The ids the plan resumed, the deleted group's included.
					statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("migration_ids"), knownvalue.MapSizeExact(3)),
					statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("completes_by_itself"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("blocked_by"), knownvalue.Null())),
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, g, 4),
					a.migrationFinished(p, other, 4),
					func(*terraform.State) error {
						if scales := len(auditEvents(c, p, "SCALE_STREAM", "SCALE_GROUP")); scales != 1 {
							return fmt.Errorf("want the one scale of the timed-out apply; got %d scale events", scales)
						}
						return nil
					},
				),
			},
			{Config: config(4, "60s"), PlanOnly: true},
		},
	})
}

// A resumed wait whose sibling's migration was rolled back out of band since
// the wait timed out: the apply ends with the wait's own rolled-back error
// and ends the unfinished wait, so the next plan does not resume (and refuse)
// again and again. The prefix is split then (svc at 4, audit back at 2):
// the next plan is the repair (issue 30), not a resumed wait.
func TestAccGroupShardCount_resumedWaitOfARolledBackSiblingEnds(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g, other := acctest.RandomName("resumedrb"), "svc", "audit"
	a.createGroupOutOfBand(t, p, g, 2)
	a.createGroupOutOfBand(t, p, other, 2)
	a.env.StartConsumer(t, p, g)
	a.env.StartStalledConsumer(t, p, other)
	config := func(n int, timeout string) string {
		return a.env.ProviderConfig() + shardCountHCL("test", p, g, n, "timeouts {\n    update = \""+timeout+"\"\n  }")
	}
	rollBackOther := func() {
		waitForMigrationDone(t, a, p, g)
		ot, err := a.group(t, p, other)
		if err != nil || ot.ActiveMigration == nil {
			t.Fatalf("group %s/%s should still be under way: %+v %v", p, other, ot, err)
		}
		if _, err := a.env.Client().RollbackMigration(ctxT(t), p, other, ot.ActiveMigration.ReshardingID, outOfBandMutation()); err != nil {
			t.Fatalf("rollback: %v", err)
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(2, "2s")},
			{Config: config(4, "2s"), ExpectError: regexp.MustCompile(`(?s)Timed out waiting.*group "audit".*is ACTIVE`)},
			{PreConfig: rollBackOther, Config: config(4, "60s"), ExpectError: regexp.MustCompile(`(?s)did not complete.*group "audit".*was\s+rolled\s+back`)},
			{Config: config(4, "60s"), PlanOnly: true, ExpectNonEmptyPlan: true},
			{
				// audit's consumer is stalled: the repair's scale-out of it
				// waits for it, until the timeout.
				Config:      config(4, "2s"),
				ExpectError: regexp.MustCompile(`(?s)Timed out waiting.*group "audit"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("plan_check"), knownvalue.StringExact(planCheckSplit)),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("affected_groups"),
						knownvalue.MapExact(map[string]knownvalue.Check{g: knownvalue.Int64Exact(4), other: knownvalue.Int64Exact(2)})),
				}},
			},
			{
				PreConfig: func() {
					if gr, err := a.group(t, p, other); err != nil || gr.ShardCount != 4 {
						t.Fatalf("the repair must have scaled audit to 4: %+v %v", gr, err)
					}
				},
				Config: config(4, "60s"), PlanOnly: true, ExpectNonEmptyPlan: true, // the wait to resume
			},
		},
	})
}

func TestAccGroupShardCount_importAndDrift(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("imported"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	config := a.env.ProviderConfig() + shardCountHCL("test", p, g, 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config: config, ResourceName: shardCountAddr, ImportState: true, ImportStateKind: resource.ImportBlockWithID,
				ImportStateId: p + "/" + g,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionNoop),
				}},
			},
			{Config: config, ResourceName: shardCountAddr, ImportState: true, ImportStateId: p + "/" + g, ImportStatePersist: true},
			{Config: config, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
			{
				// Someone scales out of band: the plan shows an update back to 4.
				PreConfig: func() { scaleOutOfBand(t, a, p, 2); waitForMigrationDone(t, a, p, g) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(4)),
				}},
				Check: a.expectGroup(p, g, shardCountIs(4)),
			},
		},
	})
}

func TestAccGroupShardCount_missingGroup(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", acctest.RandomName("nothing"), "svc", 2),
			// Known at plan time: the group neither exists nor is created here.
			ExpectError: regexp.MustCompile(`(?s)does not exist.*this configuration does not create it.*create the group\s+with\s+redisstreamcoordinator_group`),
		}},
	})
}

func TestAccGroupShardCount_waitForAcceptedReturnsAtOnce(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("accepted"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	c := a.env.RequireInRepo(t, "holds the migration with an undrained shard")
	c.SetUndrainedShard(p, g, 1, true)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:            a.env.ProviderConfig() + shardCountHCL("test", p, g, 1, `wait_for = "ACCEPTED"`),
			ConfigStateChecks: expectShardCountState(1, "ACTIVE"),
		}},
	})
}

func TestAccGroupShardCount_invariantViolationsWarnWithoutBlocking(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "answers assignments with an invariant violation")
	p, g := acctest.RandomName("violated"), "svc"
	a.createGroupOutOfBand(t, p, g, 3)
	c.SetUndrainedShard(p, g, 2, true) // hold the migration so the wait polls it
	// The wait's look for violations (its first read of the assignments,
	// once the migration lingered violationsEvery) releases the migration:
	// hook-driven, so a slow machine gives the same answer.
	c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteAssignments, Times: 1 << 20,
		Kind: coordinator.FaultRespond, Status: 200, ContentType: "application/json",
		Body:    `{"targetAssignment":{},"currentAssignments":{},"revokeProgress":{},"invariantViolations":["shard 1 is owned by m-1 and m-2"]}`,
		OnMatch: func() { c.SetUndrainedShard(p, g, 2, false) }})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:            a.env.ProviderConfig() + shardCountHCL("test", p, g, 2),
			ConfigStateChecks: expectShardCountState(2, "DEPRECATED"),
			Check: resource.ComposeTestCheckFunc(
				a.migrationFinished(p, g, 2),
				a.diags.ExpectWarning(`Coordinator reports an invariant violation in group "svc"`, "shard 1 is owned by m-1 and m-2"),
			),
		}},
	})
}

func TestAccGroupShardCount_groupDeletedDuringWaitEndsIt(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "deletes the group at the moment the provider starts waiting")
	p, g := acctest.RandomName("vanished"), "svc"
	a.createGroupOutOfBand(t, p, g, 3)
	c.SetUndrainedShard(p, g, 2, true)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			PreConfig: func() {
				go whileWaiting(t, c, p, g, func() {
					if _, err := a.env.Client().DeleteGroup(ctxT(t), p, g, true, client.Mutation{Reason: "decommissioned"}); err != nil {
						t.Errorf("out-of-band delete: %v", err)
					}
				})
			},
			Config:      a.env.ProviderConfig() + shardCountHCL("test", p, g, 2),
			ExpectError: regexp.MustCompile(`(?s)did not complete.*group "svc"\s+disappeared\s+while\s+its\s+migration\s+reshard-`),
		}},
	})
}

func TestAccGroupShardCount_groupDeletedOutOfBandIsRecreated(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("gone"), "svc"
	config := a.env.ProviderConfig() + groupHCL("group", p, g, "initial_shard_count = 2") +
		shardCountHCL("test", p, g, 1, "depends_on = [redisstreamcoordinator_group.group]")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				// Read of the shard count answers 404: it leaves state and is created again; the
				// group stays in state and is re-created as a new lifecycle (-/+).
				PreConfig: func() {
					if _, err := a.env.Client().DeleteGroup(ctxT(t), p, g, true, client.Mutation{Reason: "out-of-band delete"}); err != nil {
						t.Fatalf("out-of-band delete: %v", err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("redisstreamcoordinator_group.group", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionCreate),
				}},
				Check: a.migrationFinished(p, g, 1),
			},
		},
	})
}

// expectAuditedByTerraform checks that the provider's audited mutations
// carry its request id, requestedBy and reason.
func expectAuditedByTerraform(t *testing.T, events []coordinator.AuditEvent, want int) {
	t.Helper()
	if len(events) != want {
		t.Fatalf("want %d audited calls, got %d: %+v", want, len(events), events)
	}
	for _, e := range events {
		if !strings.HasPrefix(e.RequestID, "terraform-") || deref(e.RequestedBy) != "terraform" || !strings.HasPrefix(deref(e.Reason), "terraform apply ") {
			t.Errorf("%s of %s: request id %q, requestedBy %q, reason %q", e.Action, deref(e.ConsumerGroup), e.RequestID, deref(e.RequestedBy), deref(e.Reason))
		}
	}
}

// scaleOutOfBand scales a prefix as another actor would.
func scaleOutOfBand(t *testing.T, a *accTest, p string, n int32) {
	t.Helper()
	dsScaleOutOfBand(t, a.env, p, n)
}

// waitForMigrationDone blocks until the group has no active migration.
func waitForMigrationDone(t *testing.T, a *accTest, p, g string) {
	t.Helper()
	waitForGroup(t, a, p, g, func(grp *client.Group) bool { return grp.ActiveMigration == nil })
}

// whileWaiting runs act once the provider is waiting for group {p, g}'s
// migration: two of the waits' poll rounds (listings whose request id
// names waitGroupsOperation) have arrived since the migration is active.
// The rounds follow one another, so the second's arrival means the first
// was answered, with the migration under way (a test holds it, with an
// undrained shard, until act), and handed to the wait. The refresh's, the
// plan's and the executor's listings are not rounds. (Its callers have one
// prefix and fault no listing: a round the client retried would arrive twice
// with one request id, and another prefix's rounds would count too.)
func whileWaiting(t *testing.T, c *coordinator.Coordinator, p, g string, act func()) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if b, ok := c.BackupGroup(p, g); ok && b.Migrating() {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	rounds := func() int {
		return c.RequestCountWithID("GET", coordinator.RouteMonitoringGroups, "-"+waitGroupsOperation+"-")
	}
	before := rounds()
	for time.Now().Before(deadline) {
		if rounds() >= before+2 {
			act()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	if t.Context().Err() == nil { // a test that already ended failed for its own reason
		t.Errorf("the provider never polled the migration of %s/%s", p, g)
	}
}

// drainOnceWaiting clears an undrained shard once the provider is polling the
// group's migration (whileWaiting), so the migration is guaranteed to be
// unfinished when the wait first looks at it.
func drainOnceWaiting(t *testing.T, c *coordinator.Coordinator, p, g string, shard int) {
	whileWaiting(t, c, p, g, func() { c.SetUndrainedShard(p, g, shard, false) })
}

// rollbackWhenWaiting rolls back the group's migration as soon as the
// provider polls it (whileWaiting), as an operator would in the middle of
// an apply.
func rollbackWhenWaiting(t *testing.T, a *accTest, c *coordinator.Coordinator, p, g string) {
	whileWaiting(t, c, p, g, func() {
		grp, err := a.group(t, p, g)
		if err != nil || grp.ActiveMigration == nil {
			t.Errorf("no active migration to roll back in %s/%s: %v", p, g, err)
			return
		}
		if _, err := a.env.Client().RollbackMigration(ctxT(t), p, g, grp.ActiveMigration.ReshardingID, client.Mutation{Reason: "operator rollback"}); err != nil {
			t.Errorf("out-of-band rollback: %v", err)
		}
	})
}

// A new shard count on a group created in the same apply with the prefix's
// count, while a sibling's migration to that count is still under way (its
// count has switched): nothing is scaled, but the apply takes the sibling's
// migration over and records it. The plan left migration_ids and
// migration_state known (empty, null), and the apply failed with "Provider
// produced inconsistent result after apply" (campaign seed 494568900).
func TestAccGroupShardCount_newOnCreatedGroupBesideASiblingUnderWay(t *testing.T) {
	a, p := siblingScalingOutTo5(t, "besideway")
	config := a.env.ProviderConfig() + groupHCL("g1", p, "g1", "initial_shard_count = 5") +
		shardCountHCL("test", p, "g1", 5, `wait_for = "ACCEPTED"`, "depends_on = [redisstreamcoordinator_group.g1]")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("migration_state")),
					plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("migration_ids")),
				},
			},
			ConfigStateChecks: expectShardCountState(5, "ACTIVE"),
		}},
	})
}

// The same beside an existing group already at the count: a new shard
// count resource plans what the apply records.
func TestAccGroupShardCount_newOnExistingGroupBesideASiblingUnderWay(t *testing.T) {
	a, p := siblingScalingOutTo5(t, "besideold")
	a.createGroupOutOfBand(t, p, "g1", 5)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", p, "g1", 5, `wait_for = "ACCEPTED"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("migration_state"))},
			},
			ConfigStateChecks: expectShardCountState(5, "ACTIVE"),
		}},
	})
}

// siblingScalingOutTo5 is a prefix whose group g2 was scaled 4→5 and stays
// ACTIVE: a silent member never converges.
func siblingScalingOutTo5(t *testing.T, name string) (*accTest, string) {
	a := newAccTest(t, acctest.Options{})
	a.env.RequireInRepo(t, "keeps a sibling's scale-out ACTIVE with a silent member")
	p := acctest.RandomName(name)
	a.createGroupOutOfBand(t, p, "g2", 4)
	a.env.JoinSilentMember(t, p, "g2")
	scaleOutOfBand(t, a, p, 5)
	return a, p
}

// A scale-out of a group the same apply creates waits for a consumer the group
// cannot have yet: the plan's warning says how to order the work.
func TestAccGroupShardCount_scaleOutOfAGroupCreatedInTheSameApplyAdvises(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("createdscale")
	config := a.env.ProviderConfig() + groupHCL("g1", p, "g1", "initial_shard_count = 2") +
		shardCountHCL("test", p, "g1", 4, `wait_for = "ACCEPTED"`, "depends_on = [redisstreamcoordinator_group.g1]")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:            config,
			ConfigStateChecks: expectShardCountState(4, "ACTIVE"),
			Check: a.diags.ExpectWarning(`Group "g1" under stream prefix "`+p+`" goes from 2 to 4 shards`, `which have no live consumer`,
				`(group "g1" is created in this apply: create it first, start its consumers, then scale)`),
		}},
	})
}
