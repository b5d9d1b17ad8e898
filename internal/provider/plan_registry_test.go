package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
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
						plancheck.ExpectUnknownValue("redisstreamcoordinator_group.two", tfjsonpath.New("initial_shard_count")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: a.expectGroup(p, "g3", shardCountIs(2)),
			},
		},
	})
}

// TestAccGroupShardCount_scaleInTheApplyThatDeletesASibling: one apply
// removes a group of the prefix (deletion_policy DELETE) and changes the
// prefix's count through redisstreamcoordinator_group_shard_count. The
// delete runs first (the removed group depended on the shard count), so
// Terraform's re-plan of the scale sees the prefix without it: the group
// this apply deleted is put back into the preview's basis, as the plan saw
// it, and the apply-time basis check does not take its delete for a change
// behind the plan's back (campaign seed 417: "element "g2" has vanished").
func TestAccGroupShardCount_scaleInTheApplyThatDeletesASibling(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("scaledel")
	a.createConsumedGroupOutOfBand(t, p, "g1", 2)
	two := groupHCL("two", p, "g2", `deletion_policy = "DELETE"`, "initial_shard_count = 2", "depends_on = [redisstreamcoordinator_group_shard_count.count]")
	config := func(count int, withTwo bool) string {
		c := a.env.ProviderConfig() + shardCountHCL("count", p, "g1", count, `wait_for = "ACCEPTED"`)
		if withTwo {
			c += two
		}
		return c
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(2, true)},
			{
				Config: config(3, false),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("redisstreamcoordinator_group.two", plancheck.ResourceActionDestroy),
					plancheck.ExpectKnownValue(shardCountAddr2, reshardingPath("affected_groups"), knownvalue.MapExact(map[string]knownvalue.Check{
						"g1": knownvalue.Int64Exact(2), "g2": knownvalue.Int64Exact(2),
					})),
				}},
				Check: a.expectGroup(p, "g1", shardCountIs(3)),
			},
		},
	})
	if _, err := a.group(t, p, "g2"); err == nil {
		t.Fatal("group g2 still exists")
	}
}

const shardCountAddr2 = "redisstreamcoordinator_group_shard_count.count"

// TestAccGroup_createdTogetherWithAndWithoutCount: one apply creates two
// groups of a new stream prefix, "g1" with initial_shard_count = 3 and "g2"
// without, and nothing makes Terraform create g1 first (here g1 even depends
// on g2, so g2 would be created first, at the coordinator's default of 12,
// splitting the prefix). The plan refuses, saying what to set, and creates
// nothing. (TestAccGroup_siblingsCreatedInOneApplyAgree: with the groups
// without a count depending on the one with it, they inherit it.)
func TestAccGroup_createdTogetherWithAndWithoutCount(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("together")
	config := a.env.ProviderConfig() + groupHCL("one", p, "g1", "initial_shard_count = 3", "depends_on = [redisstreamcoordinator_group.two]") +
		groupHCL("two", p, "g2")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:      config,
			ExpectError: diagRe("need one shard count", "Nothing was sent", `initial_shard_count = 3 on "g2" too`, "depends_on"),
		}},
	})
	for _, g := range []string{"g1", "g2"} {
		if _, err := a.group(t, p, g); err == nil {
			t.Fatalf("group %s was created", g)
		}
	}
}

func TestPlanRegistryExplains(t *testing.T) {
	planned := map[string]int64{"a": 4, "b": 4}
	type step struct {
		target  int32
		planned map[string]int64
	}
	cases := []struct {
		name   string
		steps  []step
		strike bool
		n      string
		was    int64
		now    int64
		want   bool
	}{
		{name: "nothing journaled", n: "a", was: 4, now: 6},
		{name: "the run's stream scale, as planned", steps: []step{{6, planned}}, n: "a", was: 4, now: 6, want: true},
		{name: "another target", steps: []step{{8, planned}}, n: "a", was: 4, now: 6},
		{name: "the plan saw the group at another count", steps: []step{{6, planned}}, n: "a", was: 3, now: 6},
		{name: "a group the plan did not show", steps: []step{{6, planned}}, n: "c", was: 4, now: 6},
		{name: "a plan that could not preview", steps: []step{{6, nil}}, n: "c", was: 4, now: 6, want: true},
		{name: "a revert's rollback", steps: []step{{4, map[string]int64{"a": 6}}}, n: "a", was: 6, now: 4, want: true},
		{name: "struck: proved not sent", steps: []step{{6, planned}}, strike: true, n: "a", was: 4, now: 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r planRegistry
			for _, st := range tc.steps {
				r.noteScale("orders", st.target, st.planned)
			}
			if tc.strike {
				r.strikeScale("orders")
			}
			if got := r.explains("orders", tc.n, tc.was, tc.now); got != tc.want {
				t.Fatalf("explains(%q, %d→%d) = %v, want %v", tc.n, tc.was, tc.now, got, tc.want)
			}
			if r.explains("other", tc.n, tc.was, tc.now) {
				t.Fatal("a step of one prefix explained a group of another")
			}
		})
	}
}

func TestPlanRegistryAsPlanned(t *testing.T) {
	var r planRegistry
	grp := func(name string, count int32, am *client.Migration) client.Group {
		return client.Group{StreamPrefix: "orders", ConsumerGroup: name, ShardCount: count, ActiveMigration: am}
	}
	basis := func(g client.Group) int32 {
		out, _ := planBasisOfPrefix(&r, []client.Group{g}, g.StreamPrefix, "")
		return out[g.ConsumerGroup].ShardCount
	}
	if got := basis(grp("a", 6, nil)); got != 6 {
		t.Fatalf("nothing journaled: %d, want the group as it is", got)
	}
	r.noteScale("orders", 6, map[string]int64{"a": 4, "b": 4})
	for _, tc := range []struct {
		name string
		in   client.Group
		want int32
	}{
		{"at the target", grp("a", 6, nil), 4},
		{"under way to it", grp("b", 4, &client.Migration{ToShardCount: 6, State: client.MigrationActive}), 4},
		{"at another count", grp("a", 5, nil), 5},
		{"not in the plan", grp("c", 6, nil), 6},
	} {
		if got := basis(tc.in); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	// A later step with an empty plan (a created group's rescale) explains
	// nothing and hides nothing.
	r.noteScale("orders", 6, map[string]int64{})
	if got := basis(grp("a", 6, nil)); got != 4 {
		t.Fatalf("after an empty-plan step: %d, want the count planned by the stream scale (4)", got)
	}
	if r.explains("orders", "c", 5, 6) {
		t.Fatal("an empty-plan step explained a group it did not plan")
	}
	if got := basis(client.Group{StreamPrefix: "payments", ConsumerGroup: "a", ShardCount: 6}); got != 6 {
		t.Fatalf("a group of another prefix: %d, want 6", got)
	}
}
