package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// TestAccGroup_renameAfterScaleUsesCurrentCount: after the prefix was scaled
// through redisstreamcoordinator_group_shard_count (3 to 2), renaming one of
// its groups with deletion_policy DELETE creates the new name with the
// prefix's current count. The group's shard_count attribute is not raised by
// a refresh, so the deleted group is put back into the create's apply-time
// basis with the count the plan's refresh read, not with the stale attribute
// (campaign seed 2: "other groups disagree: g1 (2), g2 (3)").
func TestAccGroup_renameAfterScaleUsesCurrentCount(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("renscale")
	config := func(g2 string, count int) string {
		initial := "initial_shard_count = 3"
		if g2 != "g2" {
			initial = "" // the new name inherits the prefix's count
		}
		return a.env.ProviderConfig() +
			groupHCL("one", p, "g1", `deletion_policy = "DELETE"`, "initial_shard_count = 3") +
			groupHCL("two", p, g2, `deletion_policy = "DELETE"`, initial) +
			shardCountHCL("count", p, "g1", count, "depends_on = [redisstreamcoordinator_group.one, redisstreamcoordinator_group.two]")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config("g2", 3), Check: a.expectGroup(p, "g2", shardCountIs(3))},
			{Config: config("g2", 2), Check: a.expectGroup(p, "g2", shardCountIs(2))},
			{
				Config: config("g3", 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("redisstreamcoordinator_group.two", plancheck.ResourceActionDestroyBeforeCreate),
						plancheck.ExpectKnownValue("redisstreamcoordinator_group.two", tfjsonpath.New("initial_shard_count"), knownvalue.Int64Exact(2)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: a.expectGroup(p, "g3", shardCountIs(2)),
			},
		},
	})
}
