package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// countedGroupsHCL is n groups (prefixes base-00, base-01, …) with 4
// shards, each with a shard-count resource: 2n resources.
func countedGroupsHCL(base string, n int) string {
	return fmt.Sprintf(`
resource "redisstreamcoordinator_group" "g" {
  count               = %[2]d
  stream_prefix       = format("%[1]s-%%02d", count.index)
  consumer_group      = "svc"
  initial_shard_count = 4
  deletion_policy     = "DELETE"
}

resource "redisstreamcoordinator_group_shard_count" "s" {
  count          = %[2]d
  stream_prefix  = redisstreamcoordinator_group.g[count.index].stream_prefix
  consumer_group = redisstreamcoordinator_group.g[count.index].consumer_group
  shard_count    = 4
  # Drift back to 4 during an ACTIVE scale-out is a rollback (the plan
  # refuses a revert it cannot make).
  rollback_on_revert = true
}
`, base, n)
}

func countedPrefix(base string, i int) string { return fmt.Sprintf("%s-%02d", base, i) }

// expectRefreshRequests checks, against the in-repo coordinator's request
// counts since the step's PreConfig reset them, how one refreshing plan read
// the groups. Against a real coordinator it checks nothing (the plan checks
// next to it still assert what the refresh found).
func expectRefreshRequests(c *coordinator.Coordinator, check func(counts map[string]int, groupGETs, listings int) error) plancheck.PlanCheck {
	return planCheckFunc(func(_ context.Context, _ plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
		if c == nil {
			return
		}
		counts := c.RequestCounts()
		if err := check(counts, c.RequestCount("GET", coordinator.RouteGroup), c.RequestCount("GET", coordinator.RouteMonitoringGroups)); err != nil {
			resp.Error = fmt.Errorf("%w; requests by route: %v", err, counts)
		}
	})
}

// A refresh of 2N resources (N groups, each with a shard count) sends at most
// listAfterDistinctGroups+1 requests: a GET for each of the first groups, then
// one listing that serves the rest, and the plan's own checks reuse it.
func TestAccRefreshCost_manyGroupsShareOneListing(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "counts the coordinator's requests by route")
	const n = 20
	config := a.env.ProviderConfig() + countedGroupsHCL(acctest.RandomName("cost"), n)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: c.ResetRequestCounts,
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
					expectRefreshRequests(c, func(counts map[string]int, gets, listings int) error {
						if total := totalOf(counts); total > listAfterDistinctGroups+1 || total > 3 || listings != 1 || gets != listAfterDistinctGroups {
							return fmt.Errorf("refresh of %d resources: %d requests (%d group GETs, %d listings), want %d GETs and one listing",
								2*n, total, gets, listings, listAfterDistinctGroups)
						}
						return nil
					}),
				}},
			},
		},
	})
}

// A workspace of few groups reads them one by one; its shard count
// resources' refresh records each prefix as a whole (a split prefix is
// drift, issue 30), from one listing for the run, however many other groups
// the coordinator holds.
func TestAccRefreshCost_smallWorkspaceListsOnce(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "counts the coordinator's requests by route")
	base := acctest.RandomName("small")
	for i := 0; i < 30; i++ {
		a.createGroupOutOfBand(t, countedPrefix(base+"-other", i), "svc", 1)
	}
	const n = listAfterDistinctGroups
	config := a.env.ProviderConfig() + countedGroupsHCL(base, n)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: c.ResetRequestCounts,
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
					expectRefreshRequests(c, func(counts map[string]int, gets, listings int) error {
						if total := totalOf(counts); listings != 1 || gets > n || total > n+1 {
							return fmt.Errorf("refresh of %d groups and their shard counts: %d requests (%d group GETs, %d listings), want at most one GET per group and one listing", n, total, gets, listings)
						}
						return nil
					}),
				}},
			},
		},
	})
}

// Drift stays exact when the refresh is served by a listing: out-of-band
// scales, deletes, rollbacks and creates all show. Each kind of change hits
// more groups than are read one by one, so the listing serves at least one.
func TestAccRefreshCost_driftThroughTheListing(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.Coordinator // nil against a real coordinator: no request counts
	base := acctest.RandomName("drift")
	const n = 2 * (listAfterDistinctGroups + 1)
	scaled, deleted := []int{0, 1, 2}, []int{3, 4, 5}
	config := a.env.ProviderConfig() + countedGroupsHCL(base, n)
	resetCounts := func() {
		if c != nil {
			c.ResetRequestCounts()
		}
	}
	listedOnce := expectRefreshRequests(c, func(_ map[string]int, gets, listings int) error {
		if listings != 1 || gets > listAfterDistinctGroups {
			return fmt.Errorf("%d group GETs and %d listings, want at most %d GETs and one listing", gets, listings, listAfterDistinctGroups)
		}
		return nil
	})
	sc := func(i int) string { return fmt.Sprintf("redisstreamcoordinator_group_shard_count.s[%d]", i) }
	g := func(i int) string { return fmt.Sprintf("redisstreamcoordinator_group.g[%d]", i) }

	var scaledChecks, deletedChecks, rolledBackChecks, recreatedChecks []plancheck.PlanCheck
	for _, i := range scaled {
		scaledChecks = append(scaledChecks, plancheck.ExpectResourceAction(sc(i), plancheck.ResourceActionUpdate))
		rolledBackChecks = append(rolledBackChecks, plancheck.ExpectResourceAction(sc(i), plancheck.ResourceActionNoop))
	}
	for _, i := range deleted {
		deletedChecks = append(deletedChecks,
			// A vanished group is planned as a new lifecycle (-/+).
			plancheck.ExpectResourceAction(g(i), plancheck.ResourceActionDestroyBeforeCreate),
			plancheck.ExpectResourceAction(sc(i), plancheck.ResourceActionCreate))
		recreatedChecks = append(recreatedChecks, plancheck.ExpectResourceAction(sc(i), plancheck.ResourceActionUpdate))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				// Out of band: scale three prefixes out (a scale-out without
				// consumers stays ACTIVE) and delete three groups.
				PreConfig: func() {
					for _, i := range scaled {
						scaleOutOfBand(t, a, countedPrefix(base, i), 6)
					}
					for _, i := range deleted {
						if _, err := a.env.Client().DeleteGroup(ctxT(t), countedPrefix(base, i), "svc", true, client.Mutation{Reason: "out-of-band delete"}); err != nil {
							t.Fatalf("out-of-band delete: %v", err)
						}
					}
					resetCounts()
				},
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: append(append(scaledChecks, deletedChecks...), listedOnce),
				},
			},
			{
				// Out of band: roll the scales back and create the deleted
				// groups again with 3 shards. The state still holds every
				// group (plans do not save what they refresh).
				PreConfig: func() {
					for _, i := range scaled {
						p := countedPrefix(base, i)
						grp, err := a.group(t, p, "svc")
						if err != nil || grp.ActiveMigration == nil {
							t.Fatalf("no active migration to roll back in %s: %v", p, err)
						}
						if _, err := a.env.Client().RollbackMigration(ctxT(t), p, "svc", grp.ActiveMigration.ReshardingID, client.Mutation{Reason: "operator rollback"}); err != nil {
							t.Fatalf("out-of-band rollback: %v", err)
						}
					}
					for _, i := range deleted {
						a.createGroupOutOfBand(t, countedPrefix(base, i), "svc", 3)
					}
					resetCounts()
				},
				Config:             config,
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: append(append(rolledBackChecks, recreatedChecks...), listedOnce),
				},
			},
		},
	})
}

func totalOf(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}
