package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// The stale replacement of group_replace_stale_test.go with g2's
// initial_shard_count omitted: the plan showed the count g2 inherits (4),
// and the create's plan at apply computed 6 from the moved g1. Before, the
// apply sent the DELETE and then failed with "Provider produced
// inconsistent final plan" on initial_shard_count, shard_count and
// sibling_shard_counts; now the delete is refused before it is sent.
func TestAccGroup_staleReplaceInheritingRefusedBeforeDelete(t *testing.T) {
	for _, tc := range []staleReplaceCase{
		{name: "replace_stream_scale", streamScale: true},
		{name: "rename_group_scale", rename: true},
	} {
		t.Run(tc.name, func(t *testing.T) { testStaleReplace(t, tc) })
	}
}

// A saved -replace of a prefix's only group, whose replacement takes the
// group's own count, is refused before the DELETE when that group was
// scaled since the plan: the create would no longer make what was reviewed.
func TestAccGroup_staleReplaceOfTheOnlyGroupRefusedBeforeDelete(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "scales the group between plan and apply and reads the audit log")
	p, g := acctest.RandomName("staleself"), "g1"
	config := func(n int) string {
		return a.env.ProviderConfig() + groupHCL("test", p, g, `deletion_policy = "DELETE"`, replacedBy) + replaceTrigger(n)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(1)},
			{
				Config: config(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionDestroyBeforeCreate),
					betweenPlanAndApply(func() { a.scaleGroupOutOfBand(t, c, p, g, 7, false) }),
				}},
				ExpectError: regexp.MustCompile(`(?s)Stale plan: the replacement of group ` + regexp.QuoteMeta(p) + `/` + g + `.*` +
					words(`Nothing was sent to the coordinator: group "g1" was not deleted`)),
			},
			// Terraform forgets the group without deleting it, so that what
			// the refused apply left is read after the test.
			{Config: a.env.ProviderConfig() + replaceTrigger(2) +
				"\nremoved {\n  from = redisstreamcoordinator_group.test\n  lifecycle {\n    destroy = false\n  }\n}\n"},
		},
	})
	if deletes := terraformMutations(c, p, "DELETE_GROUP"); len(deletes) != 0 {
		t.Fatalf("the refused apply sent a delete: %+v", deletes)
	}
	if grp, err := a.group(t, p, g); err != nil || grp.ShardCount != 7 {
		t.Fatalf("g1 must still exist at 7 shards: %+v, %v", grp, err)
	}
}

// The same saved -replace applied after the group was deleted out of band:
// the delete has nothing left to do, and the replacement is created at the
// count the plan showed.
func TestAccGroup_savedReplaceOfAGroupDeletedSinceCreatesItAsPlanned(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("repgone"), "g1"
	config := func(n int) string {
		return a.env.ProviderConfig() + groupHCL("test", p, g, `deletion_policy = "DELETE"`, replacedBy) + replaceTrigger(n)
	}
	var before int32
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(1), Check: func(*terraform.State) error {
				grp, err := a.group(t, p, g)
				if err == nil {
					before = grp.ShardCount
				}
				return err
			}},
			{
				Config: config(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionDestroyBeforeCreate),
					betweenPlanAndApply(func() {
						if _, err := a.env.Client().DeleteGroup(ctxT(t), p, g, true, outOfBandMutation()); err != nil {
							t.Error(err)
						}
					}),
				}},
				Check: func(*terraform.State) error {
					grp, err := a.group(t, p, g)
					if err == nil && grp.ShardCount != before {
						err = fmt.Errorf("re-created with %d shards, the plan showed %d", grp.ShardCount, before)
					}
					return err
				},
			},
		},
	})
}
