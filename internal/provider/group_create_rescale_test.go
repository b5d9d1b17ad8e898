package provider

import (
	"fmt"
	"net/http"
	"regexp"
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

// A -replace of one group of a prefix (deletion_policy DELETE) in the apply
// that also changes the prefix's count through another group's shard count
// (campaign seed 815614843). Terraform orders the two only when the
// configuration does, so each order is driven here: the replacement first
// (the scale rescales the new group), the scale first (the new group is
// created at the prefix's new count, and sends no scale of its own), the scale
// while the replaced group's migration is awaited, and the scale between the
// replacement's delete and its create. Every one completes, the prefix ends
// at one count, and the next plan is empty.

const rescaleCountAddr = "redisstreamcoordinator_group_shard_count.count"

// scaleThenReplace: g2's first create, the stream scale, then g2's
// replacement.
var scaleThenReplace = []string{"CREATE_GROUP", "SCALE_STREAM", "DELETE_GROUP", "CREATE_GROUP"}

// rescaleConfig: groups g1 (the anchor, 4 shards, with the prefix's shard
// count) and g2 (deletion_policy DELETE, inheriting, replaced when n
// changes); extra goes into g2's block, countExtra into the shard count's.
func rescaleConfig(a *accTest, p string, count, n int, extra, countExtra string) string {
	return a.env.ProviderConfig() + groupHCL("anchor", p, "g1", "initial_shard_count = 4") +
		groupHCL("test", p, "g2", `deletion_policy = "DELETE"`, "force_delete = true", replacedBy,
			"depends_on = [redisstreamcoordinator_group.anchor"+extra+"]") +
		shardCountHCL("count", p, "g1", count, "depends_on = [redisstreamcoordinator_group.anchor"+countExtra+"]") +
		replaceTrigger(n)
}

// rescaleSteps: create at 4 shards, then replace g2 and scale the prefix
// to 2 in one apply (between runs after its plan); the plan counts g2 among
// the scale's groups, at the count it has, leaves the count the new g2
// inherits unknown, and both groups end at 2.
func rescaleSteps(a *accTest, p, extra, countExtra string, between func(), checks ...resource.TestCheckFunc) []resource.TestStep {
	checks = append([]resource.TestCheckFunc{a.expectGroup(p, "g1", shardCountIs(2)), a.expectGroup(p, "g2", shardCountIs(2))}, checks...)
	if between == nil {
		between = func() {}
	}
	return []resource.TestStep{
		{Config: rescaleConfig(a, p, 4, 1, extra, countExtra)},
		{
			// A scale-in: groups with no consumer complete it by themselves.
			Config: rescaleConfig(a, p, 2, 2, extra, countExtra),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction(rescaleCountAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(groupAddr, tfjsonpath.New("initial_shard_count")),
					plancheck.ExpectKnownValue(rescaleCountAddr, tfjsonpath.New("resharding").AtMapKey("affected_groups"),
						knownvalue.MapExact(map[string]knownvalue.Check{"g1": knownvalue.Int64Exact(4), "g2": knownvalue.Int64Exact(4)})),
					betweenPlanAndApply(between),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: resource.ComposeTestCheckFunc(checks...),
		},
		{Config: rescaleConfig(a, p, 2, 2, extra, countExtra), PlanOnly: true},
	}
}

// createdAtPrefixCount checks the audit trail of a g2 created after the
// stream scale (want: the prefix's and g2's mutations in order, the first
// create included): its create, at the prefix's new count, and no scale of
// its own.
func createdAtPrefixCount(a *accTest, p string, want ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		c := a.env.Coordinator
		if c == nil {
			return nil
		}
		var seq []string
		for _, e := range terraformMutations(c, p) {
			if e.ConsumerGroup == nil || *e.ConsumerGroup == "g2" {
				seq = append(seq, e.Action)
			}
		}
		if fmt.Sprint(seq) != fmt.Sprint(want) {
			return fmt.Errorf("g2's and the prefix's mutations: %v, want %v", seq, want)
		}
		return nil
	}
}

// TestAccGroupRescale_replacementFirst: the shard count depends on g2, so
// Terraform re-creates g2 first and the stream scale rescales it. Before,
// the plan (made after g2's create was planned) left g2 out of
// affected_groups and the apply-time re-plan put it back: "Provider produced
// inconsistent final plan".
func TestAccGroupRescale_replacementFirst(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("rsfirst")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps:                    rescaleSteps(a, p, "", ", redisstreamcoordinator_group.test", nil),
	})
}

// TestAccGroupRescale_scaleFirst: g2 depends on the shard count, so
// Terraform deletes g2, updates the shard count (the scale and its wait),
// then creates g2 at the prefix's new count, 2. Before, its create was
// refused as a stale plan after its delete: the group was gone.
func TestAccGroupRescale_scaleFirst(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("rsscale")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		// Terraform deletes g2 before it updates what g2 depends on.
		Steps: rescaleSteps(a, p, ", redisstreamcoordinator_group_shard_count.count", "", nil,
			createdAtPrefixCount(a, p, "CREATE_GROUP", "DELETE_GROUP", "SCALE_STREAM", "CREATE_GROUP")),
	})
}

// TestAccGroupRescale_replacedWhileItsMigrationIsAwaited: no order in the
// configuration; g2's delete waits until the stream scale was applied, and
// g2's old migration cannot complete (a member that never converges), so
// the shard count's wait is still following it when the replacement deletes
// it. That delete is this apply's own: the wait stops following g2 instead of
// failing with "group disappeared" (or, for the new g2, a migration not
// found), and state keeps no migration the next refresh would miss.
func TestAccGroupRescale_replacedWhileItsMigrationIsAwaited(t *testing.T) {
	a := newAccTest(t, acctest.Options{RebalanceTimeout: time.Hour})
	c := a.env.RequireInRepo(t, "holds the replacement's delete until the stream scale was applied")
	p := acctest.RandomName("rsawait")
	scaled := func() bool { return len(auditEvents(c, p, coordinator.ActionScaleStream)) > 0 }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: rescaleSteps(a, p, "", "", func() {
			a.env.JoinSilentMember(t, p, "g2")
			c.InjectFault(coordinator.Fault{
				Method: http.MethodDelete, Path: "/coord/v1/streams/" + p + "/groups/g2", Kind: coordinator.FaultDelay,
				Delay: time.Minute, // a bound only: Until releases it
				Until: scaled,
			})
		}, createdAtPrefixCount(a, p, scaleThenReplace...), resource.TestCheckResourceAttr(rescaleCountAddr, "migration_ids.%", "1"),
			resource.TestCheckResourceAttrSet(rescaleCountAddr, "migration_ids.g1")),
	})
}

// TestAccGroupRescale_scaleBetweenDeleteAndCreate: no order in the
// configuration; the stream scale is answered only once g2's delete was
// applied, and it holds the prefix while it is sent, so g2's create follows
// it: the scale rescales g1 alone (g2 missing is this apply's own delete),
// and the new g2 is created at 2.
func TestAccGroupRescale_scaleBetweenDeleteAndCreate(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds the stream scale until the replacement's delete was applied")
	p := acctest.RandomName("rsgap")
	deleted := func() bool { _, ok := c.BackupGroup(p, "g2"); return !ok }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: rescaleSteps(a, p, "", "", func() {
			// The delete waits for the scale to arrive (the provider then
			// holds the prefix), the scale for the delete to be applied.
			sent := c.RequestCount(http.MethodPost, coordinator.RouteStreamScale)
			c.InjectFault(coordinator.Fault{
				Method: http.MethodDelete, Path: "/coord/v1/streams/" + p + "/groups/g2", Kind: coordinator.FaultDelay,
				Delay: time.Minute, // a bound only: Until releases it
				Until: func() bool { return c.RequestCount(http.MethodPost, coordinator.RouteStreamScale) > sent },
			})
			c.InjectFault(coordinator.Fault{
				Method: http.MethodPost, Path: "/coord/v1/streams/" + p + "/scale", Kind: coordinator.FaultDelay,
				Delay: time.Minute, // a bound only: Until releases it
				Until: deleted,
			})
		}, createdAtPrefixCount(a, p, "CREATE_GROUP", "DELETE_GROUP", "SCALE_STREAM", "CREATE_GROUP"),
			func(*terraform.State) error {
				scales := auditEvents(c, p, coordinator.ActionScaleStream)
				if len(scales) != 1 || scales[0].Status != http.StatusAccepted {
					return fmt.Errorf("want one accepted stream scale, got %+v", scales)
				}
				return nil
			}),
	})
}

// TestAccGroupRescale_replacedOwnGroup: a -replace of the shard count's own
// group in the apply that changes the prefix's count. The shard count
// depends on its group, so Terraform re-creates the group first; the shard
// count's re-plan then finds the new group (metadataVersion 1, below the
// version its refresh recorded) and describes it as created, as the plan
// did, instead of refusing with "Stale plan: group … no longer exists" or a
// metadata regression (campaign seed 924925679); the scale rescales both
// groups and the next plan is empty.
func TestAccGroupRescale_replacedOwnGroup(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("rsown")
	config := func(count, n int) string {
		return a.env.ProviderConfig() +
			groupHCL("anchor", p, "g1", "initial_shard_count = 4", `deletion_policy = "DELETE"`, "force_delete = true", replacedBy) +
			groupHCL("other", p, "g2", "depends_on = [redisstreamcoordinator_group.anchor]") +
			shardCountHCL("count", p, "g1", count, "depends_on = [redisstreamcoordinator_group.anchor, redisstreamcoordinator_group.other]") +
			replaceTrigger(n)
	}
	anchor := "redisstreamcoordinator_group.anchor"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(4, 1)},
			{
				Config: config(2, 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(anchor, plancheck.ResourceActionDestroyBeforeCreate),
						plancheck.ExpectResourceAction(rescaleCountAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(rescaleCountAddr, tfjsonpath.New("resharding").AtMapKey("affected_groups"),
							knownvalue.MapExact(map[string]knownvalue.Check{"g1": knownvalue.Int64Exact(4), "g2": knownvalue.Int64Exact(4)})),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "g1", shardCountIs(2)), a.expectGroup(p, "g2", shardCountIs(2))),
			},
			{Config: config(2, 2), PlanOnly: true},
		},
	})
}

// The adversarial review's cases (each failed, or left the prefix split,
// before its fix): every path that takes the prefix to the target registers
// it, and a group that owes its per-group scale gets it from a fresh read.

// TestAccGroupRescale_partWayStreamScaleKeepsTheReplacement: the stream
// scale fails part-way (503 provisioning: g1 scaled, g3 PREPARING), the
// take-over finishes it with per-group scales, then g2's replacement is
// created: the take-over registered the prefix, so the create is brought to
// the target instead of being refused after g2's delete.
func TestAccGroupRescale_partWayStreamScaleKeepsTheReplacement(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "fails a stream scale part-way")
	p := acctest.RandomName("rspart")
	config := func(count, n int) string {
		return a.env.ProviderConfig() + groupHCL("anchor", p, "g1", "initial_shard_count = 4") +
			groupHCL("third", p, "g3", "depends_on = [redisstreamcoordinator_group.anchor]") +
			groupHCL("test", p, "g2", `deletion_policy = "DELETE"`, "force_delete = true", replacedBy,
				"depends_on = [redisstreamcoordinator_group.anchor, redisstreamcoordinator_group_shard_count.count]") +
			shardCountHCL("count", p, "g1", count, "depends_on = [redisstreamcoordinator_group.anchor, redisstreamcoordinator_group.third]") +
			replaceTrigger(n)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(4, 1)},
			{
				PreConfig: func() { c.FailStreamScaleAt(p, 1) },
				Config:    config(2, 2),
				Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "g1", shardCountIs(2)), a.expectGroup(p, "g2", shardCountIs(2)),
					a.expectGroup(p, "g3", shardCountIs(2))),
			},
		},
	})
}

// revertConfig: g1 (with the prefix's shard count, rollback_on_revert) and
// g2 (DELETE, replaced when n changes); order makes the shard count depend
// on g2 ("count-after") or g2 on the shard count ("group-after").
func revertConfig(a *accTest, p string, count, n int, order string) string {
	groupDeps, countDeps := "redisstreamcoordinator_group.anchor", "redisstreamcoordinator_group.anchor"
	if order == "count-after" {
		countDeps += ", redisstreamcoordinator_group.test"
	} else {
		groupDeps += ", redisstreamcoordinator_group_shard_count.count"
	}
	return a.env.ProviderConfig() + groupHCL("anchor", p, "g1", "initial_shard_count = 4") +
		groupHCL("test", p, "g2", `deletion_policy = "DELETE"`, "force_delete = true", replacedBy, "depends_on = ["+groupDeps+"]") +
		shardCountHCL("count", p, "g1", count, "rollback_on_revert = true", "depends_on = ["+countDeps+"]") +
		replaceTrigger(n)
}

// TestAccGroupRescale_revertWithAReplacement: the prefix is mid scale-out
// 4→8 (no consumer: ACTIVE); one apply reverts to 4 (rollback_on_revert) and
// replaces g2. Replacement first: the new g2 (8 shards, as planned) has no
// migration to roll back, so the revert scales it to 4 itself. Replacement
// after: the create takes g1 back at 4 for the revert this apply made, and
// brings the new g2 to 4. Before, the first left the prefix at 4 and 8
// with an empty next plan, and the second lost g2 after its delete.
func TestAccGroupRescale_revertWithAReplacement(t *testing.T) {
	for _, order := range []string{"count-after", "group-after"} {
		t.Run(order, func(t *testing.T) {
			a := newAccTest(t, acctest.Options{})
			p := acctest.RandomName("rsrevert")
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: a.factories(),
				Steps: []resource.TestStep{
					{Config: revertConfig(a, p, 4, 1, order)},
					{Config: revertConfig(a, p, 8, 1, order)},
					{
						Config: revertConfig(a, p, 4, 2, order),
						Check:  resource.ComposeTestCheckFunc(a.expectGroup(p, "g1", shardCountIs(4)), a.expectGroup(p, "g2", shardCountIs(4))),
					},
					{Config: revertConfig(a, p, 4, 2, order), PlanOnly: true},
				},
			})
		})
	}
}

// TestAccGroupRescale_revertWaitsForTheScaleItSent: the revert of
// revertWithAReplacement (count-after) scales the new g2, created at 8, to
// 4 with the per-group scale after rolling g1 back. That scale-in's
// migration is the apply's: held by an undrained removed shard of g2
// until the wait's poll has seen it, the apply (wait_for = COMPLETION)
// returns only once it completed, and migration_ids records it. Before,
// the revert did not track it and returned at once, g2 still DRAINING.
func TestAccGroupRescale_revertWaitsForTheScaleItSent(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds the new g2's scale-in with an undrained shard until the wait sees it")
	p := acctest.RandomName("rsrevwait")
	const order = "count-after"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: revertConfig(a, p, 4, 1, order)},
			{Config: revertConfig(a, p, 8, 1, order)},
			{
				PreConfig: func() {
					c.SetUndrainedShard(p, "g2", 5, true)
					go drainOnceWaiting(t, c, p, "g2", 5)
				},
				Config: revertConfig(a, p, 4, 2, order),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("redisstreamcoordinator_group_shard_count.count", tfjsonpath.New("migration_ids").AtMapKey("g2"),
						knownvalue.StringRegexp(regexp.MustCompile(`^reshard-`))),
				},
				Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "g1", shardCountIs(4)), a.migrationFinished(p, "g2", 4)),
			},
			{Config: revertConfig(a, p, 4, 2, order), PlanOnly: true},
		},
	})
}

// TestAccGroupRescale_createdAfterTheScaleSendsNoScale: g2 is created
// after the scale to 3 with every per-group scale of it refused (503). It
// is created at 3: the apply leaves the prefix at one count and sends no
// per-group scale. Before, g2 was created at 4 and its per-group scale to 3
// refused: the apply exited 0 with a warning, the prefix split at 3 and 4.
func TestAccGroupRescale_createdAfterTheScaleSendsNoScale(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "refuses the per-group scale")
	p := acctest.RandomName("rsowed")
	cfg := func(count, n int) string {
		return rescaleConfig(a, p, count, n, ", redisstreamcoordinator_group_shard_count.count", "")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: cfg(4, 1)},
			{
				PreConfig: func() {
					c.InjectFault(coordinator.Fault{Method: http.MethodPost, Path: "/coord/v1/streams/" + p + "/groups/g2/scale",
						Kind: coordinator.FaultRespond, Status: http.StatusServiceUnavailable, ErrorCode: "COORDINATOR_TERMINATING",
						Message: "terminating", Times: 1000})
				},
				Config:           cfg(3, 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "g1", shardCountIs(3)), a.expectGroup(p, "g2", shardCountIs(3)),
					createdAtPrefixCount(a, p, "CREATE_GROUP", "DELETE_GROUP", "SCALE_STREAM", "CREATE_GROUP"),
					func(*terraform.State) error {
						if n := c.RequestCount(http.MethodPost, coordinator.RouteGroupScale); n != 0 {
							return fmt.Errorf("%d per-group scales reached the coordinator, want 0", n)
						}
						return nil
					}),
			},
			{
				PreConfig: func() { c.ClearFaults() },
				Config:    cfg(2, 2),
				Check:     resource.ComposeTestCheckFunc(a.expectGroup(p, "g1", shardCountIs(2)), a.expectGroup(p, "g2", shardCountIs(2))),
			},
			{Config: cfg(2, 2), PlanOnly: true},
		},
	})
}

// TestAccGroupRescale_drainedPrefixWithAReplacementFirst: a drained prefix
// (0 shards) brought back to 4 in the apply that replaces g2 (with
// initial_shard_count = 4, as a drained prefix requires), the replacement
// first. The shard count's apply takes the new g2 at its own planned count,
// not at the old g2's 0. Before: "Stale plan … g2 went from 0 to 4", and
// the prefix stayed at 0 and 4.
func TestAccGroupRescale_drainedPrefixWithAReplacementFirst(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("rsdrain")
	config := func(count, n int, extra string) string {
		return a.env.ProviderConfig() + groupHCL("anchor", p, "g1", "initial_shard_count = 4") +
			groupHCL("test", p, "g2", `deletion_policy = "DELETE"`, "force_delete = true", replacedBy, extra,
				"depends_on = [redisstreamcoordinator_group.anchor]") +
			shardCountHCL("count", p, "g1", count, "depends_on = [redisstreamcoordinator_group.anchor, redisstreamcoordinator_group.test]") +
			replaceTrigger(n)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(4, 1, "")},
			{Config: config(0, 1, "")},
			{
				Config: config(4, 2, "initial_shard_count = 4"),
				Check:  resource.ComposeTestCheckFunc(a.expectGroup(p, "g1", shardCountIs(4)), a.expectGroup(p, "g2", shardCountIs(4))),
			},
		},
	})
}

// TestAccGroupRescale_newGroupAndShardCountInADrainedPrefix: campaign seed
// 660566742. A drained prefix (its one group at 0 shards) gets a new group
// created with initial_shard_count = 3 and, in the same apply, a new shard
// count resource on it at 3. The new group is at 3 but its sibling is not:
// the shard count's plan shows the change (the sibling scaled to 3), and
// the apply makes it. Before the fix the plan said nothing would be sent
// (no migration), the apply scaled the sibling anyway, and Terraform failed
// with "Provider produced inconsistent result after apply".
func TestAccGroupRescale_newGroupAndShardCountInADrainedPrefix(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("rsdrnew")
	a.createGroupOutOfBand(t, p, "g2", 2)
	if _, err := a.env.Client().ScaleStream(ctxT(t), p, 0, outOfBandMutation()); err != nil {
		t.Fatal(err)
	}
	waitForGroup(t, a, p, "g2", func(g *client.Group) bool { return g.ShardCount == 0 && g.ActiveMigration.Finished() })
	config := a.env.ProviderConfig() + groupHCL("anchor", p, "g1", "initial_shard_count = 3") +
		shardCountHCL("count", p, "g1", 3, `wait_for = "ACCEPTED"`, "depends_on = [redisstreamcoordinator_group.anchor]")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectUnknownValue("redisstreamcoordinator_group_shard_count.count", tfjsonpath.New("migration_ids")),
			}},
			Check: resource.ComposeTestCheckFunc(
				a.expectGroup(p, "g1", shardCountIs(3)), a.expectGroup(p, "g2", shardCountIs(3)),
				resource.TestCheckResourceAttrSet("redisstreamcoordinator_group_shard_count.count", "migration_ids.g2"),
			),
		}},
	})
}

// TestAccGroupRescale_newShardCountScalesFirst: as
// TestAccGroupRescale_scaleFirst, with the shard count a new resource,
// whose preview is known after apply, and g2's initial_shard_count the
// prefix's count at plan time. What the scale changed is the prefix as the
// apply first read it, so g2's create, planned again after the scale, sees
// the siblings as the plan did and follows the prefix to 2, instead of
// being refused ("Shard count differs") after its delete.
func TestAccGroupRescale_newShardCountScalesFirst(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("rsnew")
	config := func(n int, count string, g2DependsOn string) string {
		return a.env.ProviderConfig() + groupHCL("anchor", p, "g1", "initial_shard_count = 4") +
			groupHCL("test", p, "g2", `deletion_policy = "DELETE"`, "force_delete = true", "initial_shard_count = 4", replacedBy,
				"depends_on = [redisstreamcoordinator_group.anchor"+g2DependsOn+"]") +
			count + replaceTrigger(n)
	}
	after := config(2, shardCountHCL("count", p, "g1", 2, "depends_on = [redisstreamcoordinator_group.anchor]"),
		", redisstreamcoordinator_group_shard_count.count")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(1, "", "")},
			{
				Config: after,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction(rescaleCountAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectUnknownValue(rescaleCountAddr, tfjsonpath.New("resharding")),
				}},
				Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "g1", shardCountIs(2)), a.expectGroup(p, "g2", shardCountIs(2)),
					createdAtPrefixCount(a, p, "CREATE_GROUP", "DELETE_GROUP", "SCALE_STREAM", "CREATE_GROUP")),
			},
			{Config: after, PlanOnly: true},
		},
	})
}
