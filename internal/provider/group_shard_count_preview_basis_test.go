package provider

import (
	"context"
	"regexp"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// TestAccPullRequestWorkflow_assessmentSurvivesConsumersJoining: a scale-out
// of a prefix whose groups have no live consumer is planned with -out, then
// consumers join every group (EMPTY becomes live) before the apply. Nothing
// the reviewer saw as the basis changed, so the apply goes through, for an
// update and for a new shard count resource alike: completes_by_itself and
// blocked_by depend on liveness, which moves by itself, so they are known
// after apply (the plan's warning says what they were at plan time) and
// Terraform's re-plan during apply cannot disagree with them ("Provider
// produced inconsistent final plan … .resharding.blocked_by", campaign seed
// 6, issue 23 §1).
func TestAccPullRequestWorkflow_assessmentSurvivesConsumersJoining(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing bool // the shard count resource is already in state
	}{{"update", true}, {"create", false}} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAccTest(t, acctest.Options{})
			p, g := acctest.RandomName("joins"), "svc"
			a.createGroupOutOfBand(t, p, g, 2)
			a.createGroupOutOfBand(t, p, "other", 2)
			config := func(n int) string {
				return a.env.ProviderConfig() + shardCountHCL("test", p, g, n, `wait_for = "ACCEPTED"`)
			}
			var steps []resource.TestStep
			if tc.existing {
				steps = append(steps, resource.TestStep{Config: config(2)})
			}
			// An update's preview has the refresh's count and leaves the
			// assessment to the apply; a new resource's is wholly known after
			// apply (Terraform plans it again then, from a fresh read).
			previewChecks := []plancheck.PlanCheck{plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding"))}
			warning := a.diags.ExpectWarning("does not complete by itself", "as read at plan time")
			if tc.existing {
				previewChecks = []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("from_shard_count"), knownvalue.Int64Exact(2)),
					plancheck.ExpectUnknownValue(shardCountAddr, reshardingPath("completes_by_itself")),
					plancheck.ExpectUnknownValue(shardCountAddr, reshardingPath("blocked_by")),
				}
				warning = a.diags.ExpectWarning("known after apply", "no live consumer", "does not complete by itself")
			}
			steps = append(steps, resource.TestStep{
				Config: config(4),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append(previewChecks,
					checkPlan(func(context.Context, *tfjson.Plan) error {
						for _, name := range []string{g, "other"} {
							a.env.StartConsumer(t, p, name)
							waitForLiveMember(t, a, p, name)
						}
						return nil
					}),
				)},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("completes_by_itself"), knownvalue.Bool(true)),
				},
				Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "other", shardCountIs(4)), warning),
			})
			resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: a.factories(), Steps: steps})
		})
	}
}

// TestAccPullRequestWorkflow_newResourceTakingOverAMigrationThatCompletes:
// a new shard count resource is planned while the group's migration to the
// configured count is under way (started by someone else: the plan takes it
// over), and the migration completes by itself before the apply. A migration
// completing by itself never makes a plan fail (issue 23 §1): Terraform's
// re-plan of the new resource during apply finds nothing to do, and agrees
// with the plan.
func TestAccPullRequestWorkflow_newResourceTakingOverAMigrationThatCompletes(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("takeover"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	scaleOutOfBand(t, a, p, 4) // a scale-out with no consumer: stays ACTIVE
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 4),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionCreate),
				plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
				checkPlan(func(context.Context, *tfjson.Plan) error {
					a.env.StartConsumer(t, p, g)
					waitForMigrationDone(t, a, p, g)
					return nil
				}),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				// Nothing was left to send: no change is recorded.
				statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding"), knownvalue.Null()),
			},
			Check: resource.ComposeTestCheckFunc(a.expectGroup(p, g, shardCountIs(4)),
				a.diags.ExpectWarning("already under way", "the apply takes it over and sends no scale for it")),
		}},
	})
}

// TestAccPullRequestWorkflow_savedPlanRefusesASiblingThatMovedAlone: a saved
// plan of a count change, then another actor moves one sibling alone (a
// per-group scale), or adds a group to the prefix, before the apply. The
// preview's affected_groups are the counts the refresh recorded
// (siblings_seen), so Terraform's re-plan during apply agrees with the plan,
// and the apply refuses it as stale before sending anything. Before, the
// re-plan read the siblings afresh: "Provider produced inconsistent final
// plan … .resharding.affected_groups["c"]" (campaign seed 167027730, a
// sibling restored from a backup between plan and apply).
func TestAccPullRequestWorkflow_savedPlanRefusesASiblingThatMovedAlone(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("moved")
	config := func(count int) string {
		cfg := a.env.ProviderConfig()
		for _, g := range []string{"a", "b", "c"} {
			cfg += groupHCL(g, p, g, "initial_shard_count = 2")
		}
		return cfg + shardCountHCL("count", p, "a", count, "depends_on = [redisstreamcoordinator_group.a, redisstreamcoordinator_group.b, redisstreamcoordinator_group.c]")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(2)},
			{
				Config: config(4),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{betweenPlanAndApply(func() {
					// A scale-in: it completes by itself, and blocks nothing.
					if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "c", 1, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
				})}},
				ExpectError: regexp.MustCompile(`(?s)Stale plan: the groups of stream prefix.*` + words(`group "c" went from 2 to 1 shards`) +
					".*" + words("Nothing was sent to the coordinator")),
			},
			{
				Config: config(4),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{betweenPlanAndApply(func() {
					dsCreateGroup(t, a.env, p, "d", 2)
				})}},
				ExpectError: regexp.MustCompile(`(?s)Stale plan: the groups of stream prefix.*` + words(`group "d" (2 shards) appeared`)),
			},
			{
				// Planned again once c's scale-in has finished (a migration
				// under way to another count would block the scale), the
				// change goes through.
				PreConfig: func() { waitForMigrationDone(t, a, p, "c") },
				Config:    config(4),
				Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "a", shardCountIs(4)), a.expectGroup(p, "c", shardCountIs(4)),
					a.expectGroup(p, "d", shardCountIs(4))),
			},
		},
	})
	if c := a.env.Coordinator; c != nil {
		if scales := terraformMutations(c, p, "SCALE_STREAM"); len(scales) != 1 {
			t.Fatalf("want only the last step's stream scale, got %d", len(scales))
		}
	}
}
