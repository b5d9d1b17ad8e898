package provider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
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

// Issue 30 §1: a split prefix is drift. Group "b" of the prefix is scaled
// on its own, out of band, with the per-group endpoint: the prefix routes
// with two counts. The shard count resource (on group "a", which kept its
// count) plans an update whose preview lists both groups and says the
// prefix is split; the apply brings "b" back with one stream scale (a noop
// for "a"), and the next plan is empty. Before the fix the plan said "No
// changes" and the apply sent nothing.
func TestAccGroupShardCount_splitPrefixIsDriftAndApplyRepairs(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("split")
	a.createConsumedGroupOutOfBand(t, p, "a", 4)
	a.createConsumedGroupOutOfBand(t, p, "b", 4)
	config := a.env.ProviderConfig() + shardCountHCL("test", p, "a", 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config, ConfigStateChecks: expectShardCountState(4, "")},
			{
				PreConfig: func() {
					if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "b", 2, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
					waitForGroup(t, a, p, "b", func(g *client.Group) bool { return g.ShardCount == 2 && g.ActiveMigration == nil })
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("plan_check"), knownvalue.StringExact(planCheckSplit)),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("affected_groups"),
						knownvalue.MapExact(map[string]knownvalue.Check{"a": knownvalue.Int64Exact(4), "b": knownvalue.Int64Exact(2)})),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("moved_key_percent"), knownvalue.Float64Exact(movedKeyPercent(2, 4))),
				}},
				ConfigStateChecks: expectShardCountState(4, "DEPRECATED"),
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, "a", 4), a.migrationFinished(p, "b", 4),
					resource.TestCheckResourceAttrSet(shardCountAddr, "migration_ids.b"),
					resource.TestCheckNoResourceAttr(shardCountAddr, "migration_ids.a"),
				),
			},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// An in-place change of another argument keeps the
				// repair's resharding record (its affected_groups are the
				// counts from before it): it is no repair, and its apply
				// sends nothing. Before the fix it was taken for one and
				// refused as stale (campaign seed 660566827).
				Config: a.env.ProviderConfig() + shardCountHCL("test", p, "a", 4, `reason = "a new reason"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					c := a.env.Coordinator
					if c == nil {
						return nil // the audit log is the in-repo coordinator's
					}
					if events := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP"); len(events) != 1 {
						return fmt.Errorf("want the repair's one stream scale, and nothing since; got %+v", events)
					}
					return nil
				},
			},
		},
	})
}

// TestAccGroupShardCount_splitRepairOfADeletedGroupNamesTheAnswer: a saved
// plan that repairs a split prefix (the count unchanged, group "b" scaled on
// its own), applied after the resource's own group "a" was deleted out of
// band. The prefix's listing (a 200) lacks "a": the apply confirms with the
// group's own GET and reports that 404 with its errorCode and request id,
// sending nothing. Before the fix the error passed a 404 made up from the
// listing off as the coordinator's answer, without a request id (campaign
// seed 124585437 under CAMPAIGN_WEIGHTS=interrupt=10, error_names_request).
func TestAccGroupShardCount_splitRepairOfADeletedGroupNamesTheAnswer(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("splitgone")
	a.createConsumedGroupOutOfBand(t, p, "a", 4)
	a.createConsumedGroupOutOfBand(t, p, "b", 4)
	config := a.env.ProviderConfig() + shardCountHCL("test", p, "a", 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "b", 2, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
					waitForGroup(t, a, p, "b", func(g *client.Group) bool { return g.ShardCount == 2 && g.ActiveMigration == nil })
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("plan_check"), knownvalue.StringExact(planCheckSplit)),
					checkPlan(func(context.Context, *tfjson.Plan) error {
						_, err := a.env.Client().DeleteGroup(ctxT(t), p, "a", true, client.Mutation{Reason: "out-of-band delete"})
						return err
					}),
				}},
				ExpectError: diagRe(`Group "a" under stream prefix`, "does not exist", "answered 404", "errorCode GROUP_NOT_FOUND",
					"to GET", "Request id: terraform-", "run terraform plan again"),
			},
		},
	})
	if c := a.env.Coordinator; c != nil {
		if sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(sent) != 0 {
			t.Fatalf("the refused apply sent a mutation: %+v", sent)
		}
	}
}

// A split prefix whose repair cannot be sent: a migration of "b" that
// started at the configured count and heads elsewhere, with
// rollback_on_revert unset. The plan fails, naming the rollback call (an
// apply could only be refused), and nothing is sent.
func TestAccGroupShardCount_splitPrefixTheCoordinatorRefusesIsNamed(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("splitno")
	a.createConsumedGroupOutOfBand(t, p, "a", 4)
	a.createGroupOutOfBand(t, p, "b", 4) // no consumer: a scale-out of it stays ACTIVE
	config := a.env.ProviderConfig() + shardCountHCL("test", p, "a", 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "b", 6, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
				},
				Config:      config,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Stream prefix "` + p + `" is split.*` + words("Set rollback_on_revert = true") + `.*/rollback`),
			},
			{Config: config, ExpectError: regexp.MustCompile(`is split`)},
		},
	})
	g, err := a.env.Client().GetGroup(ctxT(t), p, "b")
	if err != nil {
		t.Fatal(err)
	}
	if g.ShardCount != 6 || g.ActiveMigration == nil {
		t.Fatalf("the apply must leave b's migration alone; got %+v", g)
	}
	if c := a.env.Coordinator; c != nil {
		if sent := terraformMutations(c, p); len(sent) != 0 {
			t.Fatalf("nothing may be sent; got %+v", sent)
		}
	}
}

// Issue 30 §2: a workspace that manages one group of a shared prefix (the
// other groups belong to other teams). Its refresh reads one group, and
// before the model it listed the prefix only after reading more than two
// groups, so a saved plan applied after a sibling moved alone, or after a
// group appeared, was re-planned during apply from a fresh listing:
// "Provider produced inconsistent final plan". The refresh now records the
// whole prefix, and the apply refuses the plan as stale, sending nothing.
// ownGroupOfASharedPrefix is a workspace's configuration of its own group
// "a" of prefix p (created at initial shards) and of the prefix's shard
// count, beside groups other teams manage.
func (a *accTest) ownGroupOfASharedPrefix(p string, initial int) func(count int) string {
	return func(count int) string {
		return a.env.ProviderConfig() + groupHCL("a", p, "a", fmt.Sprintf("initial_shard_count = %d", initial)) +
			shardCountHCL("test", p, "a", count, "depends_on = [redisstreamcoordinator_group.a]")
	}
}

func TestAccGroupShardCount_sharedPrefixSavedPlanAfterTheSiblingsMoved(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("shared")
	a.createGroupOutOfBand(t, p, "b", 2) // another team's group
	config := a.ownGroupOfASharedPrefix(p, 2)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(2)},
			{
				Config: config(4),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{betweenPlanAndApply(func() {
					if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "b", 1, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
				})}},
				ExpectError: regexp.MustCompile(`(?s)Stale plan: the groups of stream prefix.*` + words(`group "b" went from 2 to 1 shards`) +
					".*" + words("Nothing was sent to the coordinator")),
			},
			{
				PreConfig: func() { waitForMigrationDone(t, a, p, "b") },
				Config:    config(4),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{betweenPlanAndApply(func() {
					dsCreateGroup(t, a.env, p, "c", 1)
				})}},
				ExpectError: regexp.MustCompile(`(?s)Stale plan: the groups of stream prefix.*` + words(`group "c" (1 shards) appeared`)),
			},
			{
				Config: config(4),
				Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "a", shardCountIs(4)), a.expectGroup(p, "b", shardCountIs(4)),
					a.expectGroup(p, "c", shardCountIs(4))),
			},
		},
	})
	if c := a.env.Coordinator; c != nil {
		if scales := terraformMutations(c, p, "SCALE_STREAM"); len(scales) != 1 {
			t.Fatalf("want only the last step's stream scale, got %d", len(scales))
		}
	}
}

// The legacy siblings_seen key: version 2 is read with its migrations; version 1 (a map of
// counts, from the previous build) is read too, even with a group named
// "v" or "groups".
func TestReadPrefixSeenVersions(t *testing.T) {
	cases := map[string]struct {
		raw  string
		want map[string]int32
	}{
		"v2":                {`{"v":2,"groups":{"a":{"count":4},"b":{"count":6,"empty":true}}}`, map[string]int32{"a": 4, "b": 6}},
		"v1":                {`{"a":4,"b":6}`, map[string]int32{"a": 4, "b": 6}},
		"v1, a group v":     {`{"v":2,"a":4}`, map[string]int32{"v": 2, "a": 4}},
		"v1, groups v, too": {`{"v":2,"groups":3}`, map[string]int32{"v": 2, "groups": 3}},
	}
	for name, tc := range cases {
		rec, ok, _ := readPrefixSeen(context.Background(), fakePrivate{legacySiblingsSeen: []byte(tc.raw)}, "p")
		if !ok || !maps.Equal(rec.Counts(), tc.want) {
			t.Errorf("%s: read %v (ok %v), want %v", name, rec.Counts(), ok, tc.want)
		}
	}
	rec, _, _ := readPrefixSeen(context.Background(), fakePrivate{legacySiblingsSeen: []byte(`{"v":2,"groups":{"b":{"count":6,"empty":true}}}`)}, "p")
	if g := rec.Group("b"); g == nil || hasLiveConsumer(*g) {
		t.Errorf("v2 keeps liveness: %+v", g)
	}
}

// Review of issue 30, finding 4: the resource's own group has a migration to
// shard_count under way, and a sibling was left behind PREPARING by a stream
// scale that failed part-way (a provisioning fault on it). Waiting cannot
// repair that: a PREPARING migration never moves by itself. The plan is the
// split prefix's repair, not a wait for the own migration; the apply adopts
// that migration and resumes the sibling's with the per-group scale. Before
// the fix the plan only waited, and every apply of it was refused as a
// stale plan (the sibling was not where waiting brings it).
//
// Forced with hooks: an undrained removed shard holds "a"'s 4→2 migration
// in DRAINING while the plan is made; it is released once the plan is saved.
func TestAccGroupShardCount_underWayWithABehindSiblingPlansTheRepair(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "fails a stream scale's provisioning for one group and holds another's migration")
	p := acctest.RandomName("behind")
	a.createGroupOutOfBand(t, p, "a", 4)
	a.createGroupOutOfBand(t, p, "b", 4)
	config := a.env.ProviderConfig() + shardCountHCL("test", p, "a", 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config, ConfigStateChecks: expectShardCountState(4, "")},
			{
				PreConfig: func() {
					c.SetUndrainedShard(p, "a", 3, true)
					c.FailProvisioning(coordinator.ProvisioningFault{StreamPrefix: p, ConsumerGroup: "b", Operation: coordinator.ProvisionScale})
					// The client retries the 503 REDIS_STREAM_PROVISIONING_FAILED
					// once, and the retry meets a's migration (409): either way
					// the scale failed part-way.
					if _, err := a.env.Client().ScaleStream(ctxT(t), p, 2, outOfBandMutation()); err == nil {
						t.Fatal("want the out-of-band stream scale to fail part-way on b's provisioning; it succeeded")
					}
					waitForGroup(t, a, p, "b", func(g *client.Group) bool {
						return g.ActiveMigration != nil && g.ActiveMigration.State == client.MigrationPreparing && g.ShardCount == 4
					})
				},
				// The refresh reads "a" at 2 shards, its migration under way,
				// and "b" at 4, PREPARING: shard_count = 2 is "a"'s count.
				Config: a.env.ProviderConfig() + shardCountHCL("test", p, "a", 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("plan_check"), knownvalue.StringExact(planCheckSplit)),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("affected_groups"),
						knownvalue.MapExact(map[string]knownvalue.Check{"a": knownvalue.Int64Exact(2), "b": knownvalue.Int64Exact(4)})),
					betweenPlanAndApply(func() { c.SetUndrainedShard(p, "a", 3, false) }),
				}},
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, "a", 2), a.migrationFinished(p, "b", 2),
					// b's PREPARING migration resumed with one per-group
					// scale; no stream scale, no rollback.
					resumedByOneGroupScale(c, p, 0),
				),
			},
			{
				Config:           a.env.ProviderConfig() + shardCountHCL("test", p, "a", 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// Campaign seed 530108506: an unfinished wait (migration_ids name both
// groups of the prefix) whose migrations finished, then a stream scale that
// failed part-way on one of those groups, left PREPARING at the old count.
// The wait's ids name that group, but its migration under way is a new one
// that waiting never moves: the plan is the split prefix's repair, and its
// apply resumes the PREPARING migration with the per-group scale. Before
// the fix the group's name alone made the split the wait's to report: the
// plan only resumed the wait, and its apply was refused as a stale plan
// every time (the group was not where waiting brings it).
func TestAccGroupShardCount_resumedWaitWithASiblingPreparingSincePlansTheRepair(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "simulates undrained Redis shards and fails a stream scale's provisioning for one group")
	p, g, other := acctest.RandomName("resumedsplit"), "svc", "worker"
	a.createGroupOutOfBand(t, p, g, 4)
	a.createGroupOutOfBand(t, p, other, 4)
	config := func(n int) string {
		return a.env.ProviderConfig() + shardCountHCL("test", p, g, n, "timeouts {\n    update = \"2s\"\n  }")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(4)},
			{
				// The wait for 4→3 times out: migration_ids name both groups.
				PreConfig:   func() { c.SetUndrainedShard(p, g, 3, true) },
				Config:      config(3),
				ExpectError: regexp.MustCompile(`(?s)Timed out waiting.*is DRAINING.*` + p + `:3 still hold undrained entries`),
			},
			{
				PreConfig: func() {
					c.SetUndrainedShard(p, g, 3, false)
					waitForGroup(t, a, p, g, func(gr *client.Group) bool { return gr.ShardCount == 3 && gr.ActiveMigration == nil })
					waitForGroup(t, a, p, other, func(gr *client.Group) bool { return gr.ShardCount == 3 && gr.ActiveMigration == nil })
					// Out of band, a stream scale to 2 fails part-way on
					// "worker" (groups scale in name order): "svc" goes to 2,
					// "worker" stays at 3, PREPARING.
					if err := a.leaveMigrationPreparingAt(ctxT(t), c, p, 2, 1); err != nil {
						t.Fatal(err)
					}
					waitForGroup(t, a, p, g, func(gr *client.Group) bool { return gr.ShardCount == 2 && gr.ActiveMigration == nil })
					waitForGroup(t, a, p, other, func(gr *client.Group) bool {
						return gr.ShardCount == 3 && gr.ActiveMigration != nil && gr.ActiveMigration.State == client.MigrationPreparing
					})
				},
				// The refresh reads "svc" at 2: shard_count = 2 is its count.
				Config: config(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("plan_check"), knownvalue.StringExact(planCheckSplit)),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("affected_groups"),
						knownvalue.MapExact(map[string]knownvalue.Check{g: knownvalue.Int64Exact(2), other: knownvalue.Int64Exact(3)})),
				}},
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, g, 2), a.migrationFinished(p, other, 2),
					// worker's PREPARING migration resumed with one per-group
					// scale; the only stream scale is the timed-out apply's.
					resumedByOneGroupScale(c, p, 1),
				),
			},
			{Config: config(2), ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		},
	})
}

// resumedByOneGroupScale checks that the apply resumed a PREPARING
// migration with one accepted per-group scale, sent no rollback, and that
// the prefix saw streamScales stream scales in all.
func resumedByOneGroupScale(c *coordinator.Coordinator, p string, streamScales int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if events := terraformMutations(c, p, "SCALE_GROUP"); len(events) != 1 || events[0].Outcome != coordinator.OutcomeSuccess {
			return fmt.Errorf("want one per-group scale, accepted; got %+v", events)
		}
		if events := terraformMutations(c, p, "SCALE_STREAM", "ROLLBACK_MIGRATION"); len(events) != streamScales {
			return fmt.Errorf("want %d stream scale(s) and no rollback; got %+v", streamScales, events)
		}
		return nil
	}
}

// Review of issue 30 (stop 37), finding 2: a sibling whose per-group scale
// to the target failed its provisioning between the plan and the apply is
// left PREPARING at its old count (CONTRACT §4.6). Its count did not move,
// yet the next scale of the prefix resumes it, a send no plan showed, and
// the plan's blocked_by (none) no longer holds. The refresh's record of the
// prefix has every group's migration, and the re-plan compares it with the
// prefix by the model's rule (prefix.Record.Changes): a migration that
// started is a change, so the saved plan is refused as stale with nothing
// sent. Before, only counts were compared, and Terraform's re-plan failed
// with "Provider produced inconsistent final plan" on .resharding.blocked_by.
func TestAccGroupShardCount_savedPlanAfterASiblingWentPreparing(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "fails a per-group scale's provisioning, which leaves its migration PREPARING")
	p := acctest.RandomName("sibprep")
	a.createGroupOutOfBand(t, p, "b", 4) // another team's group
	config := a.ownGroupOfASharedPrefix(p, 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(4)},
			{
				Config: config(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("blocked_by"), knownvalue.Null()),
					betweenPlanAndApply(func() {
						a.scaleGroupOutOfBand(t, c, p, "b", 2, true)
						if g, err := a.group(t, p, "b"); err != nil || g.ShardCount != 4 || g.ActiveMigration == nil ||
							g.ActiveMigration.State != client.MigrationPreparing {
							t.Fatalf("want b at 4 shards, PREPARING 4→2; got %+v, %v", g, err)
						}
					}),
				}},
				ExpectError: regexp.MustCompile(`(?s)Stale plan: the groups of stream prefix.*` + words(`group "b" started migration`) +
					`.*PREPARING.*` + words("Nothing was sent to the coordinator")),
			},
		},
	})
	if sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(sent) != 0 {
		t.Fatalf("the refused apply sent a scale: %+v", sent)
	}
}

// Review of issue 30 (stop 37), finding 3: a new shard count resource whose
// group has a migration under way to the target (taken over, not sent
// again) in a prefix where another group is behind. The apply brings every
// group behind to the target, the ones the plan's warning named and any
// that appeared before the apply: a new resource's preview is known after
// apply (Terraform plans it again then, from a fresh read), so a group
// appearing between the saved plan and the apply no longer makes Terraform
// refuse the plan as "inconsistent final plan" (issue 43); the prefix ends
// at one count.
func TestAccGroupShardCount_newTakeOverBringsTheGroupsBehind(t *testing.T) {
	newTakeOverBesideABehindGroup(t, false)
}

func TestAccGroupShardCount_newTakeOverBringsAGroupThatAppeared(t *testing.T) {
	newTakeOverBesideABehindGroup(t, true)
}

func newTakeOverBesideABehindGroup(t *testing.T, appears bool) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "reads the audit log")
	p := acctest.RandomName("tkbehind")
	a.createGroupOutOfBand(t, p, "a", 2)
	a.createGroupOutOfBand(t, p, "b", 2)
	if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "a", 4, outOfBandMutation()); err != nil { // no consumer: stays ACTIVE
		t.Fatal(err)
	}
	step := resource.TestStep{
		Config: a.env.ProviderConfig() + shardCountHCL("test", p, "a", 4, `wait_for = "ACCEPTED"`),
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionCreate),
			plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
		}},
		Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "b", shardCountIs(4)),
			a.diags.ExpectWarning("already under way", "the apply takes it over and sends no scale for it"),
			a.diags.ExpectWarning(`goes from 2 to 4 shards`, `"b" (2 shards)`, "as read at plan time")),
	}
	want := []string{"SCALE_GROUP b"}
	if appears {
		want = append(want, "SCALE_GROUP c")
		step.ConfigPlanChecks.PreApply = append(step.ConfigPlanChecks.PreApply, betweenPlanAndApply(func() {
			dsCreateGroup(t, a.env, p, "c", 2)
		}))
		step.Check = resource.ComposeTestCheckFunc(step.Check, a.expectGroup(p, "c", shardCountIs(4)))
	}
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: a.factories(), Steps: []resource.TestStep{step}})
	var scaled []string
	for _, e := range terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION") {
		g := "(all groups)"
		if e.ConsumerGroup != nil {
			g = *e.ConsumerGroup
		}
		scaled = append(scaled, e.Action+" "+g)
	}
	sort.Strings(scaled)
	if !slices.Equal(scaled, want) {
		t.Fatalf("want the scales %v by Terraform (the groups behind, per group), got %v", want, scaled)
	}
}

// Review of issue 30 (stop 37), finding 1: a saved plan that creates a
// shard count resource in a shared prefix, applied after another group
// appeared in it. Terraform plans a new resource again during apply with no
// prior or private state; the preview it read is known after apply, so the
// re-plan agrees with the saved plan and the stream scale rescales every
// group the apply finds, the new one included: the prefix ends at one
// count, and state records the groups it rescaled. Before, Terraform
// refused the apply with "Provider produced inconsistent final plan" on
// affected_groups (issue 43). An existing resource's plan is refused as
// stale by the provider instead
// (TestAccGroupShardCount_sharedPrefixSavedPlanAfterTheSiblingsMoved).
func TestAccPullRequestWorkflow_savedCreateInASharedPrefixScalesTheGroupsItFinds(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("stalenewsh")
	a.createGroupOutOfBand(t, p, "a", 2)
	a.createGroupOutOfBand(t, p, "b", 2)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", p, "a", 1, `wait_for = "ACCEPTED"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
				betweenPlanAndApply(func() { dsCreateGroup(t, a.env, p, "c", 2) }),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("affected_groups"), knownvalue.MapExact(map[string]knownvalue.Check{
					"a": knownvalue.Int64Exact(2), "b": knownvalue.Int64Exact(2), "c": knownvalue.Int64Exact(2)})),
			},
			Check: a.diags.ExpectWarning("Resharding stream prefix", `"b" (2 shards)`, "as read at plan time"),
		}},
	})
	if c := a.env.Coordinator; c != nil {
		if sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(sent) != 1 || sent[0].Action != "SCALE_STREAM" {
			t.Fatalf("want exactly one stream scale by Terraform, got %+v", sent)
		}
	}
	for _, g := range []string{"a", "b", "c"} {
		if got, err := a.group(t, p, g); err != nil || got.ShardCount != 1 {
			t.Fatalf("the apply must bring group %s to 1 shard; got %+v, %v", g, got, err)
		}
	}
}

// Review of issue 30 (stop 37), finding 5: a refresh that reads the group
// but not the groups listing keeps no record of the prefix, and the plan
// cannot tell a split prefix from one at its count. It says so with a
// warning instead of a silent "No changes"; once the listing answers, the
// plan shows the split prefix's repair.
func TestAccGroupShardCount_refreshWithoutTheListingWarnsThatTheSplitIsUnchecked(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "refuses the groups listing")
	p := acctest.RandomName("nolist")
	a.createGroupOutOfBand(t, p, "a", 2)
	a.createGroupOutOfBand(t, p, "b", 2)
	config := a.env.ProviderConfig() + shardCountHCL("test", p, "a", 2)
	const unchecked = "Cannot check the other groups of stream prefix"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config, Check: a.diags.ExpectNoWarning(unchecked)},
			{
				PreConfig: func() {
					if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "b", 1, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
					c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Times: 1 << 20,
						Kind: coordinator.FaultRespond, Status: 403, ErrorCode: "ACCESS_DENIED", Message: "monitoring is not allowed"})
				},
				Config:   config,
				PlanOnly: true, // "No changes": the split is not seen...
			},
			{
				PreConfig: func() {
					// ...and the plan said why.
					if err := a.diags.ExpectWarning(unchecked, p, "ACCESS_DENIED", "split prefix")(nil); err != nil {
						t.Fatal(err)
					}
					c.ClearFaults()
				},
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true, // the repair of the split prefix
			},
		},
	})
}

// Second review of stop 37: the refresh saw sibling "b" PREPARING 4→2 (a
// scale whose provisioning failed; it keeps 4 shards), and the saved plan
// 4→2 resumes it. Before the apply another team sends b's scale again,
// which resumes the migration (same resharding id, now ACTIVE at 2 shards).
// A PREPARING migration never moves by itself, so the model's rule calls
// that a change: the saved plan is refused as stale, nothing sent, instead
// of Terraform's "inconsistent final plan" on affected_groups["b"].
func TestAccGroupShardCount_savedPlanAfterAPreparingSiblingWasResumed(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "fails a per-group scale's provisioning, which leaves its migration PREPARING")
	p := acctest.RandomName("sibresume")
	a.createGroupOutOfBand(t, p, "b", 4) // another team's group
	config := a.ownGroupOfASharedPrefix(p, 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(4)},
			{
				PreConfig: func() { a.scaleGroupOutOfBand(t, c, p, "b", 2, true) },
				Config:    config(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					betweenPlanAndApply(func() { a.scaleGroupOutOfBand(t, c, p, "b", 2, false) }),
				}},
				ExpectError: regexp.MustCompile(`(?s)Stale plan: the groups of stream prefix.*` + words(`group "b": migration`) +
					`.*PREPARING\)\s+was\s+resumed.*` + words("Nothing was sent to the coordinator")),
			},
		},
	})
	if sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(sent) != 0 {
		t.Fatalf("the refused apply sent a scale: %+v", sent)
	}
}

// scaleGroupOutOfBand sends group g's per-group scale to n with no retries;
// failing arms a provisioning fault first, which leaves the migration
// PREPARING at the old count (CONTRACT §4.6).
func (a *accTest) scaleGroupOutOfBand(t *testing.T, c *coordinator.Coordinator, p, g string, n int32, failing bool) {
	t.Helper()
	noRetries, err := a.noRetriesClient()
	if err != nil {
		t.Fatal(err)
	}
	if failing {
		c.FailProvisioning(coordinator.ProvisioningFault{StreamPrefix: p, ConsumerGroup: g, Operation: coordinator.ProvisionScale})
	}
	if _, err := noRetries.ScaleGroup(ctxT(t), p, g, n, outOfBandMutation()); (err != nil) != failing {
		t.Fatalf("%s's scale to %d (provisioning failing: %v): %v", g, n, failing, err)
	}
}
