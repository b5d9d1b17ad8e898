package provider

import (
	"fmt"
	"math"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// A new group can be added to a drained prefix (every group at 0 shards):
// the coordinator creates groups with at least 1 shard and a new group does
// not inherit its siblings' count. Without initial_shard_count the plan says
// so and what to set; with it the group is created, with a warning that it
// is at a different count than its siblings and how to converge; scaling
// the prefix to that count (a scale from 0 to N, allowed) brings the prefix
// back to one count. Two new groups of the drained prefix must agree.
func TestAccGroup_newGroupOfDrainedPrefix(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("drainedprefix")
	a.createGroupOutOfBand(t, p, "old", 2)
	scaleOutOfBand(t, a, p, 0)
	waitForMigrationDone(t, a, p, "old")
	newGroup := groupHCL("test", p, "new", "initial_shard_count = 3")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config: a.env.ProviderConfig() + groupHCL("test", p, "new"),
				ExpectError: wrappedError(`(?s)Cannot inherit a shard count of 0.*group "old" \(0 shards\).*` +
					`creates a group with at least 1 shard \(initialShardCount >= 1\).*Set initial_shard_count \(1 or more\) explicitly`),
			},
			{
				// Two new groups of the drained prefix must still agree.
				Config:      a.env.ProviderConfig() + newGroup + groupHCL("other", p, "other", "initial_shard_count = 4"),
				ExpectError: wrappedError(`Groups created together under one stream prefix disagree on the shard count`),
			},
			{
				Config: a.env.ProviderConfig() + newGroup,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("initial_shard_count"), knownvalue.Int64Exact(3)),
					plancheck.ExpectUnknownValue(groupAddr, tfjsonpath.New("sibling_shard_counts")),
				}},
				Check: resource.ComposeTestCheckFunc(
					a.diags.ExpectWarning("New group of a drained stream prefix: 3 shards, its siblings 0", `group "old" (0 shards)`,
						"scale it to 3 with redisstreamcoordinator_group_shard_count", "a scale from 0 to N", "to keep the prefix drained, scale it to 0"),
					a.expectGroup(p, "new", shardCountIs(3)),
					a.expectGroup(p, "old", shardCountIs(0)),
				),
			},
			{
				// The advice works: the prefix is scaled to the new group's count.
				Config: a.env.ProviderConfig() + newGroup +
					shardCountHCL("scale", p, "old", 3, `wait_for = "ACCEPTED"`, "depends_on = [redisstreamcoordinator_group.test]"),
				Check: resource.ComposeTestCheckFunc(
					a.expectGroup(p, "new", shardCountIs(3)),
					a.expectGroup(p, "old", shardCountIs(3)),
				),
			},
		},
	})
}

// The coordinator sets no upper bound on shard counts: a group it holds with
// 5000 shards, or with the largest count a 32-bit int carries, imports with
// generated configuration that plans nothing but the import (the validators
// refused anything above 1024 before).
func TestAccImport_generateConfigOutAnyShardCount(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	a.env.RequireInRepo(t, "creates groups with up to 2147483647 shards, which a real coordinator with stream provisioning would provision")
	for _, n := range []int32{5000, math.MaxInt32} {
		p, g := acctest.RandomName(fmt.Sprintf("large%d", n)), "svc"
		a.createGroupOutOfBand(t, p, g, n)
		for _, addr := range []string{groupAddr, shardCountAddr} {
			t.Run(fmt.Sprintf("%d/%s", n, addr), func(t *testing.T) {
				resource.ParallelTest(t, resource.TestCase{
					ProtoV6ProviderFactories: a.factories(),
					Steps: []resource.TestStep{{
						Config: a.env.ProviderConfig(), ResourceName: addr,
						ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateId: p + "/" + g, GenerateConfig: true,
						ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop),
							plancheck.ExpectKnownValue(addr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(int64(n))),
						}},
					}},
				})
			})
		}
	}
}

// A NEW large count (a create, a scale) is valid and gets a plan warning;
// an existing one (the plan of what is already there) gets none.
func TestAccShardCount_largeNewCountWarns(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	a.env.RequireInRepo(t, "creates and scales groups to thousands of shards")
	p := acctest.RandomName("largenew")
	group := groupHCL("test", p, "svc", "initial_shard_count = 5000")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config: a.env.ProviderConfig() + group,
				Check: resource.ComposeTestCheckFunc(
					a.diags.ExpectWarning("Unusually large shard count: 5000", fmt.Sprintf(`Group "svc" under stream prefix %q is created with 5000 shards`, p),
						"sets no upper bound", "only a warning"),
					a.expectGroup(p, "svc", shardCountIs(5000)),
				),
			},
			{
				PreConfig: a.diags.Reset,
				Config: a.env.ProviderConfig() + group +
					shardCountHCL("test", p, "svc", 6000, `wait_for = "ACCEPTED"`, "depends_on = [redisstreamcoordinator_group.test]"),
				Check: resource.ComposeTestCheckFunc(
					a.diags.ExpectWarning("Unusually large shard count: 6000", fmt.Sprintf(`Stream prefix %q is scaled to 6000 shards`, p)),
					a.diags.ExpectNoWarning("Unusually large shard count: 5000"),
					a.expectGroup(p, "svc", shardCountIs(6000)),
				),
			},
			{
				PreConfig: a.diags.Reset,
				Config: a.env.ProviderConfig() + group +
					shardCountHCL("test", p, "svc", 6000, `wait_for = "ACCEPTED"`, "depends_on = [redisstreamcoordinator_group.test]"),
				PlanOnly: true,
			},
		},
	})
	if w := a.diags.Warnings(); len(filterMatching(w, "Unusually large shard count")) != 0 {
		t.Errorf("the plan of counts the coordinator already holds warned: %q", w)
	}
}

func filterMatching(list []string, pattern string) []string {
	re := regexp.MustCompile(regexp.QuoteMeta(pattern))
	var out []string
	for _, s := range list {
		if re.MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}
