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
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// TestAccGroup_renameWithDeletePolicyCompletes: renaming a group whose
// deletion_policy is DELETE (Terraform deletes it, then creates the new name)
// creates the new group with the old one's count; the create's plan does not
// count the group the same apply deletes (issue 24 §3).
func TestAccGroup_renameWithDeletePolicyCompletes(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("rename")
	config := func(g string) string {
		return a.env.ProviderConfig() + groupHCL("test", p, g, `deletion_policy = "DELETE"`, "initial_shard_count = 3")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config("old")},
			{
				Config: config("new"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionDestroyBeforeCreate),
						plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("initial_shard_count"), knownvalue.Int64Exact(3)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("consumer_group"), knownvalue.StringExact("new")),
				},
				Check: a.expectGroup(p, "new", shardCountIs(3)),
			},
		},
	})
	if _, err := a.group(t, p, "old"); err == nil {
		t.Fatalf("the renamed group's old name %q still exists", "old")
	}
}

// TestAccGroup_renameInheritsCountWithDeletePolicy: without
// initial_shard_count the renamed group takes the count of the group it
// replaces, the prefix's only one.
func TestAccGroup_renameInheritsCountWithDeletePolicy(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("renamei")
	config := func(g string, extra ...string) string {
		return a.env.ProviderConfig() + groupHCL("test", p, g, append([]string{`deletion_policy = "DELETE"`}, extra...)...)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config("old", "initial_shard_count = 3")},
			{
				Config: config("new"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionDestroyBeforeCreate),
						plancheck.ExpectUnknownValue(groupAddr, tfjsonpath.New("initial_shard_count")),
					},
				},
				Check: a.expectGroup(p, "new", shardCountIs(3)),
			},
		},
	})
}

// TestAccGroup_replaceWithOtherCreatesUsesListingAfterDelete: a -replace of a
// group (deletion_policy DELETE) in an apply that also creates other groups
// of its prefix. The other creates' apply-time plans list the groups while
// the delete is held; the replaced group's create is planned again after the
// delete and must not be served that listing, which still has it.
func TestAccGroup_replaceWithOtherCreatesUsesListingAfterDelete(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds the delete until another create's plan has listed the groups")
	p, g := acctest.RandomName("replist"), "svc"
	testReplaceWithOtherCreates(t, a, p, g, func() {
		// The apply's delete waits for the apply's first listing.
		listed := c.RequestCount(http.MethodGet, coordinator.RouteMonitoringGroups)
		c.InjectFault(coordinator.Fault{
			Method: http.MethodDelete, Path: "/coord/v1/streams/" + p + "/groups/" + g, Kind: coordinator.FaultDelay,
			Delay: time.Minute, // a bound only: Until releases it
			Until: func() bool { return c.RequestCount(http.MethodGet, coordinator.RouteMonitoringGroups) > listed },
		})
	})
}

// TestAccGroup_replaceWithOtherCreatesWhileTheDeleteIsAnswered: the same
// apply, with the other creates planned and sent while the coordinator has
// already applied the delete and its answer has not reached the provider
// (it is then lost, and read back). Their apply-time plans and their
// creates find the replaced group gone: that is this apply's own delete, and
// the group still gives the prefix its count, so they create at it instead
// of the coordinator's default.
func TestAccGroup_replaceWithOtherCreatesWhileTheDeleteIsAnswered(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "applies the delete and holds its answer until the other creates have landed")
	p, g := acctest.RandomName("repans"), "svc"
	exists := func(name string) bool { _, ok := c.BackupGroup(p, name); return ok }
	testReplaceWithOtherCreates(t, a, p, g, func() {
		// The other creates' apply starts only once the delete has taken
		// effect (their plans and their creates list the groups)...
		c.InjectFault(coordinator.Fault{
			Method: http.MethodGet, Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultDelay, Times: 2,
			Delay: time.Minute, Until: func() bool { return !exists(g) },
		})
		// ...and the delete's answer waits until both have landed.
		c.InjectFault(coordinator.Fault{
			Method: http.MethodDelete, Path: "/coord/v1/streams/" + p + "/groups/" + g, Kind: coordinator.FaultHangAfterApply,
			Delay: time.Minute, // a bound only: Until releases it
			Until: func() bool { return exists("a") && exists("b") },
		})
	}, func(*terraform.State) error {
		if deletes := auditEvents(c, p, "DELETE_GROUP"); len(deletes) != 1 {
			return fmt.Errorf("want one delete, got %d", len(deletes))
		}
		return nil
	})
}

// testReplaceWithOtherCreates creates group g of prefix p (deletion_policy
// DELETE, 2 shards), then replaces it in an apply that also creates groups
// "a" and "b" of p without a count; between runs after that apply's plan.
// Every group ends at the prefix's 2 shards.
func testReplaceWithOtherCreates(t *testing.T, a *accTest, p, g string, between func(), checks ...resource.TestCheckFunc) {
	t.Helper()
	one := a.env.ProviderConfig() + groupHCL("test", p, g, `deletion_policy = "DELETE"`, "initial_shard_count = 2", replacedBy)
	more := one + groupHCL("a", p, "a") + groupHCL("b", p, "b")
	checks = append([]resource.TestCheckFunc{
		a.expectGroup(p, g, shardCountIs(2)), a.expectGroup(p, "a", shardCountIs(2)), a.expectGroup(p, "b", shardCountIs(2)),
	}, checks...)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: one + replaceTrigger(1)},
			{
				Config: more + replaceTrigger(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionDestroyBeforeCreate),
						plancheck.ExpectResourceAction("redisstreamcoordinator_group.a", plancheck.ResourceActionCreate),
						betweenPlanAndApply(between),
					},
				},
				Check: resource.ComposeTestCheckFunc(checks...),
			},
		},
	})
}

// TestAccGroup_replacingOnlyGroupWithProvisioningRefusedAtPlan: with stream
// provisioning on, renaming (or replacing) the only group of a prefix would
// delete it and then meet 409 STREAM_PREFIX_ALREADY_EXISTS, since the delete
// keeps the streams: the plan refuses it, with what to do, and nothing is
// deleted.
func TestAccGroup_replacingOnlyGroupWithProvisioningRefusedAtPlan(t *testing.T) {
	a := newAccTest(t, acctest.Options{StreamProvisioning: true})
	c := a.env.RequireInRepo(t, "provisions stream keys the delete keeps")
	p := acctest.RandomName("repprov")
	config := func(g string, n int) string {
		return a.env.ProviderConfig() + groupHCL("test", p, g, `deletion_policy = "DELETE"`, "initial_shard_count = 2", replacedBy) + replaceTrigger(n)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config("old", 1)},
			{
				Config: config("new", 1),
				ExpectError: regexp.MustCompile(`(?s)Replacing the only group of stream prefix.*` + words("STREAM_PREFIX_ALREADY_EXISTS") +
					".*" + words("Nothing was sent to the coordinator") + ".*" + words("add a second redisstreamcoordinator_group")),
			},
			{
				Config: config("old", 2),
				ExpectError: regexp.MustCompile(`(?s)Replacing the only group of stream prefix.*` + words("the only group of stream prefix") +
					".*" + words("Keep the group instead of replacing it")),
			},
			{Config: config("old", 1) + groupHCL("other", p, "other")},
			{
				// A second group keeps the prefix: the rename then works.
				Config: config("new", 1) + groupHCL("other", p, "other"),
				Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "new", shardCountIs(2)), a.expectGroup(p, "other", shardCountIs(2)),
					func(*terraform.State) error {
						if deletes := auditEvents(c, p, "DELETE_GROUP"); len(deletes) != 1 {
							return fmt.Errorf("want only the last step's delete, got %d deletes", len(deletes))
						}
						return nil
					}),
			},
		},
	})
}

// replacedBy makes a group replaced, as terraform apply -replace does, when
// replaceTrigger's input changes (Terraform plans it from its prior state and
// then replaces it; a tainted group is planned as a plain create instead).
const replacedBy = "lifecycle {\n    replace_triggered_by = [terraform_data.replace]\n  }"

func replaceTrigger(n int) string {
	return fmt.Sprintf("\nresource \"terraform_data\" \"replace\" {\n  input = %d\n}\n", n)
}

// TestAccGroup_replaceWithShardCountCompletes: a -replace of a group with
// deletion_policy DELETE that a group_shard_count manages completes, and the
// next plan does not fail on the new group's metadataVersion starting again
// (issue 23 §2, third bullet): the replacement was this configuration's own.
// The new group is created with its initial_shard_count (2), not the
// shard count's 3: the same apply brings it to 3, as the repair of a split
// prefix does, so state never claims a count the group lacks (campaign
// seeds 660566797, 660566690).
func TestAccGroup_replaceWithShardCountCompletes(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("repsc"), "svc"
	config := func(n int) string {
		return a.env.ProviderConfig() + groupHCL("group", p, g, `deletion_policy = "DELETE"`, "initial_shard_count = 2", replacedBy) +
			shardCountHCL("test", p, g, 3, "depends_on = [redisstreamcoordinator_group.group]") + replaceTrigger(n)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(1)},
			{
				Config: config(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("redisstreamcoordinator_group.group", plancheck.ResourceActionDestroyBeforeCreate),
						plancheck.ExpectUnknownValue("redisstreamcoordinator_group_shard_count.test", tfjsonpath.New("migration_ids")),
					},
					// The next plan does not fail closed with the metadata
					// runbook for the version starting over.
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				// The scale-out (no consumer yet) is under way: routing
				// already has 3 shards.
				Check: a.expectGroup(p, g, shardCountIs(3)),
			},
			{Config: config(2), PlanOnly: true},
		},
	})
}

// TestAccGroup_renameCreateBeforeDestroyCompletes: with create_before_destroy
// the new name is created while the old group still exists, and the plan's
// values hold either way.
func TestAccGroup_renameCreateBeforeDestroyCompletes(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("renamecbd")
	config := func(g string) string {
		return a.env.ProviderConfig() + groupHCL("test", p, g, `deletion_policy = "DELETE"`, "initial_shard_count = 3",
			"lifecycle {\n    create_before_destroy = true\n  }")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config("old") + groupHCL("keep", p, "keep", "initial_shard_count = 3")},
			{
				Config: config("new") + groupHCL("keep", p, "keep", "initial_shard_count = 3"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionCreateBeforeDestroy)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: a.expectGroup(p, "new", shardCountIs(3)),
			},
		},
	})
}

// TestAccGroup_renameOnlyGroupCreateBeforeDestroyCompletes: the same for the
// prefix's only group, whose count the new name takes.
func TestAccGroup_renameOnlyGroupCreateBeforeDestroyCompletes(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("renamecbd1")
	config := func(g string, extra ...string) string {
		return a.env.ProviderConfig() + groupHCL("test", p, g, append([]string{`deletion_policy = "DELETE"`,
			"lifecycle {\n    create_before_destroy = true\n  }"}, extra...)...)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config("old", "initial_shard_count = 3")},
			{
				Config: config("new"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionCreateBeforeDestroy),
						plancheck.ExpectUnknownValue(groupAddr, tfjsonpath.New("initial_shard_count")),
					},
				},
				Check: a.expectGroup(p, "new", shardCountIs(3)),
			},
		},
	})
}

// TestAccGroup_renameOfAVanishedGroupIsNoRecreation: a group deleted out of
// band (its refresh records it as vanished) and renamed in the same change.
// The new name is a new group, not the vanished one created again: its
// create carries no recreation, in the plan and in Terraform's re-plan during
// apply alike. Before, the plan described the new name as the vanished
// group's re-creation, and the re-plan (after the no-op delete) did not:
// "Provider produced inconsistent final plan … .recreation" (campaign seed
// 415652962).
func TestAccGroup_renameOfAVanishedGroupIsNoRecreation(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("renvan")
	config := func(g string) string {
		return a.env.ProviderConfig() + groupHCL("anchor", p, "g1", "initial_shard_count = 3") +
			groupHCL("test", p, g, `deletion_policy = "DELETE"`, "depends_on = [redisstreamcoordinator_group.anchor]")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config("old")},
			{
				PreConfig: func() {
					if _, err := a.env.Client().DeleteGroup(ctxT(t), p, "old", true, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
				},
				Config: config("new"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionDestroyBeforeCreate),
						plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("recreation"), knownvalue.Null()),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("recreation"), knownvalue.Null()),
				},
				Check: a.expectGroup(p, "new", shardCountIs(3)),
			},
		},
	})
}

// TestAccGroup_replaceAfterATimedOutWaitBringsTheNewGroupToTheCount: a
// shard count change times out waiting (an undrained shard holds the
// migration), leaving a pending wait; then the group is replaced and the
// new one is created with its initial_shard_count (4), not shard_count (3).
// The pending wait was for the old group's migration: the apply brings the
// new group to 3, as any replacement whose count differs does. Before the
// fix the apply resumed the old wait, adopted nothing that existed, sent no
// scale, and state claimed 3 shards for a group with 4 (review of issue 30,
// fourth round).
func TestAccGroup_replaceAfterATimedOutWaitBringsTheNewGroupToTheCount(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds a migration with an undrained shard until the wait times out")
	p, g := acctest.RandomName("reppend"), "svc"
	config := func(count, n int) string {
		return a.env.ProviderConfig() +
			groupHCL("group", p, g, `deletion_policy = "DELETE"`, "force_delete = true", "initial_shard_count = 4", replacedBy) +
			shardCountHCL("test", p, g, count, "depends_on = [redisstreamcoordinator_group.group]", "timeouts {\n    update = \"2s\"\n  }") +
			replaceTrigger(n)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(4, 1)},
			{
				// The undrained shard never drains while it is held: the
				// wait ends at its timeout, whatever the machine's speed.
				PreConfig:   func() { c.SetUndrainedShard(p, g, 3, true) },
				Config:      config(3, 1),
				ExpectError: regexp.MustCompile(`(?s)Timed out waiting`),
			},
			{
				PreConfig: func() { c.SetUndrainedShard(p, g, 3, false) },
				Config:    config(3, 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("redisstreamcoordinator_group.group", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectUnknownValue("redisstreamcoordinator_group_shard_count.test", tfjsonpath.New("migration_ids")),
				}},
				Check: resource.ComposeTestCheckFunc(
					a.expectGroup(p, g, shardCountIs(3)),
					resource.TestCheckResourceAttrSet("redisstreamcoordinator_group_shard_count.test", "migration_ids."+g),
				),
			},
			{Config: config(3, 2), PlanOnly: true},
		},
	})
}

// TestAccGroup_renameOfASiblingWithAPreparingMigration: a shard count change
// of a prefix whose sibling, with a PREPARING migration to the target, is
// renamed in the same apply (deletion_policy DELETE). The scale resumes
// that migration, a scale-out of a group whose liveness may change before
// the apply: the plan's blocked_by is known after apply, and its warning
// names the migration as read at plan time. Terraform's re-plan during
// apply, after the sibling's delete, agrees with it (before, it lost the
// migration: "Provider produced inconsistent final plan").
func TestAccGroup_renameOfASiblingWithAPreparingMigration(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "fails a stream scale's provisioning, which leaves its migration PREPARING")
	p := acctest.RandomName("renprep")
	config := func(sibling string, count int) string {
		return a.env.ProviderConfig() +
			groupHCL("sib", p, sibling, `deletion_policy = "DELETE"`, "initial_shard_count = 3") +
			groupHCL("grp", p, "b", "initial_shard_count = 3") +
			shardCountHCL("test", p, "b", count, `wait_for = "ACCEPTED"`,
				"depends_on = [redisstreamcoordinator_group.grp, redisstreamcoordinator_group.sib]")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config("a", 3)},
			{
				// A stream scale to 4 fails at "a" (the first group), which
				// keeps its migration PREPARING at 3 shards; "b" is untouched.
				PreConfig: func() {
					if err := a.leaveMigrationPreparing(ctxT(t), c, p, 4); err != nil {
						t.Fatal(err)
					}
				},
				Config: config("c", 4),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("redisstreamcoordinator_group.sib", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectUnknownValue(shardCountAddr, reshardingPath("blocked_by")),
				}},
				Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "b", shardCountIs(4)),
					a.diags.ExpectWarning("Resharding stream prefix", `resumes migration reshard-`, `of group "a" (3→4 shards, PREPARING)`)),
			},
		},
	})
}

// TestAccGroup_replaceBesideAnotherWorkspacesGroup: a -replace whose new
// group sets an initial_shard_count that differs from a sibling this
// configuration does not manage (another workspace's group) is refused at
// plan time, with nothing sent, even when the same apply's shard count
// resource takes the prefix to that count: Terraform creates the group
// before the stream scale, and the prefix would route with two counts until
// then. Without initial_shard_count the new group takes the sibling's count
// and the stream scale brings both to the shard count (campaign seed
// 530108894, whose generator set the count beside the second workspace's
// group).
func TestAccGroup_replaceBesideAnotherWorkspacesGroup(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "counts the deletes in the audit log")
	p, g := acctest.RandomName("repsib"), "svc"
	config := func(initial string, count, n int) string {
		extra := []string{`deletion_policy = "DELETE"`, "force_delete = true", replacedBy}
		if initial != "" {
			extra = append(extra, initial)
		}
		return a.env.ProviderConfig() + groupHCL("group", p, g, extra...) +
			shardCountHCL("test", p, g, count, "depends_on = [redisstreamcoordinator_group.group]") + replaceTrigger(n)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config("initial_shard_count = 1", 1, 1)},
			{
				PreConfig: func() { a.createGroupOutOfBand(t, p, "other", 1) },
				Config:    config("initial_shard_count = 2", 2, 2),
				ExpectError: regexp.MustCompile(`(?s)Shard count differs from the other groups of the stream prefix.*` +
					words(`group "other" (1 shards)`) + ".*" + words("Nothing was sent to the coordinator")),
			},
			{
				PreConfig: func() {
					if deletes := auditEvents(c, p, "DELETE_GROUP"); len(deletes) != 0 {
						t.Fatalf("the refused plan deleted the group: %d deletes", len(deletes))
					}
				},
				Config: config("", 2, 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("redisstreamcoordinator_group.group", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeTestCheckFunc(a.expectGroup(p, g, shardCountIs(2)), a.expectGroup(p, "other", shardCountIs(2))),
			},
			{Config: config("", 2, 2), PlanOnly: true},
		},
	})
}

// TestAccGroup_newShardCountBesideARenamedSiblingWithAPreparingMigration: as
// TestAccGroup_renameOfASiblingWithAPreparingMigration, with the shard count
// a new resource, which has no refresh record of the prefix: its plan reads
// the sibling's PREPARING migration from the listing and warns that the
// change resumes it; its preview is known after apply, and the apply, after
// the sibling's delete, resumes it (campaign seeds 772216038, 772216130:
// once "Provider produced inconsistent final plan").
func TestAccGroup_newShardCountBesideARenamedSiblingWithAPreparingMigration(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "fails a stream scale's provisioning, which leaves its migration PREPARING")
	p := acctest.RandomName("newprep")
	sib := func(name string) string {
		return a.env.ProviderConfig() + groupHCL("sib", p, name, `deletion_policy = "DELETE"`, "initial_shard_count = 3")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: sib("a")},
			{
				// A stream scale to 4 fails at "a", which keeps its
				// migration PREPARING at 3 shards. "b" and its shard count
				// are created in this apply (as in the campaign's seeds: the
				// shard count's own group is then no input that moves).
				PreConfig: func() {
					if err := a.leaveMigrationPreparing(ctxT(t), c, p, 4); err != nil {
						t.Fatal(err)
					}
				},
				Config: sib("c") + groupHCL("grp", p, "b", "initial_shard_count = 3") + shardCountHCL("test", p, "b", 4, `wait_for = "ACCEPTED"`,
					"depends_on = [redisstreamcoordinator_group.grp, redisstreamcoordinator_group.sib]"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("redisstreamcoordinator_group.sib", plancheck.ResourceActionDestroyBeforeCreate),
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
				}},
				Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "b", shardCountIs(4)),
					a.diags.ExpectWarning("The change resumes migration reshard-", `of group "a" (3→4 shards, PREPARING)`)),
			},
		},
	})
}

// A replacement whose shard count apply stops before recording (its
// listing refused after the group's create) leaves the new group's
// lifecycle in state: the next plan repairs the count, with no metadata
// regression for the version starting over.
func TestAccGroup_replaceWhoseShardCountApplyStopsKeepsTheNewLifecycle(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "refuses the groups listing once the replacement's create is sent")
	p, g := acctest.RandomName("repstop"), "svc"
	config := func(n int) string {
		return a.env.ProviderConfig() + groupHCL("group", p, g, `deletion_policy = "DELETE"`, "initial_shard_count = 2", replacedBy) +
			shardCountHCL("test", p, g, 3, "depends_on = [redisstreamcoordinator_group.group]") + replaceTrigger(n)
	}
	forbid := coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultRespond, Status: 403,
		ErrorCode: "ACCESS_DENIED", Message: "monitoring is not allowed"}
	arm := betweenPlanAndApply(func() {
		c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultDelay,
			OnMatch: func() { c.InjectFault(forbid) }})
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(1)},
			{
				Config:           config(2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{arm}},
				ExpectError:      regexp.MustCompile(`Failed to list the groups of stream prefix`),
			},
			{Config: config(2), PlanOnly: true, ExpectNonEmptyPlan: true},
			{Config: config(2), Check: a.expectGroup(p, g, shardCountIs(3))},
			{Config: config(2), PlanOnly: true},
		},
	})
}
