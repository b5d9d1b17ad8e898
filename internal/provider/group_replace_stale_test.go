package provider

import (
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// A saved plan that replaces or renames group g2 (deletion_policy DELETE) of
// a prefix whose other group g1 is scaled out of band before the apply. The
// delete half is applied as saved, the create half is planned again from
// the moved prefix: before, the apply sent the DELETE and then failed the
// create ("Shard count differs … Nothing was sent", or, with the count
// omitted, "Provider produced inconsistent final plan"), leaving the group
// deleted. Now the delete is refused before it is sent, and g2 stays.

type staleReplaceCase struct {
	name        string
	rename      bool   // rename g2 instead of -replace
	streamScale bool   // scale the whole prefix instead of g1 alone
	count       string // g2's initial_shard_count line, "" to inherit
}

func testStaleReplace(t *testing.T, tc staleReplaceCase) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "scales a group between plan and apply and reads the audit log")
	p := acctest.RandomName("stalerep")
	config := func(g string, n int) string {
		return a.env.ProviderConfig() + groupHCL("anchor", p, "g1", "initial_shard_count = 4") +
			groupHCL("test", p, g, `deletion_policy = "DELETE"`, tc.count, replacedBy,
				"depends_on = [redisstreamcoordinator_group.anchor]") + replaceTrigger(n)
	}
	second := config("g2", 2)
	if tc.rename {
		second = config("g2b", 1)
	}
	// Terraform forgets g2 without deleting it, so that what the refused
	// apply left is read after the test.
	forget := a.env.ProviderConfig() + groupHCL("anchor", p, "g1", "initial_shard_count = 4") + replaceTrigger(1) +
		"\nremoved {\n  from = redisstreamcoordinator_group.test\n  lifecycle {\n    destroy = false\n  }\n}\n"
	want, moved := int32(4), func() { a.scaleGroupOutOfBand(t, c, p, "g1", 6, false) }
	if tc.streamScale {
		want, moved = 6, func() { dsScaleOutOfBand(t, a.env, p, 6) }
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config("g2", 1)},
			{
				Config: second,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionDestroyBeforeCreate),
					betweenPlanAndApply(moved),
				}},
				ExpectError: regexp.MustCompile(`(?s)Stale plan: the replacement of group ` + regexp.QuoteMeta(p) + `/g2.*` +
					words(`group "g1" went from 4 to 6 shards`) + `.*` + words(`Nothing was sent to the coordinator: group "g2" was not deleted`) +
					`.*` + words("Run terraform plan again")),
			},
			{Config: forget},
		},
	})
	if deletes := terraformMutations(c, p, "DELETE_GROUP"); len(deletes) != 0 {
		t.Fatalf("the refused apply sent a delete: %+v", deletes)
	}
	grp, err := a.group(t, p, "g2")
	if err != nil {
		t.Fatalf("g2 must still exist: %v", err)
	}
	if grp.ShardCount != want {
		t.Fatalf("g2 has %d shards, want %d", grp.ShardCount, want)
	}
}

func TestAccGroup_staleReplaceRefusedBeforeDelete(t *testing.T) {
	for _, tc := range []staleReplaceCase{
		{name: "replace_group_scale", count: "initial_shard_count = 4"},
		{name: "rename_stream_scale", rename: true, streamScale: true, count: "initial_shard_count = 4"},
		// 4 once applied, unknown in the plan that replaces terraform_data.replace.
		{name: "replace_count_known_after_apply", count: "initial_shard_count = terraform_data.replace.output * 0 + 4"},
	} {
		t.Run(tc.name, func(t *testing.T) { testStaleReplace(t, tc) })
	}
}
