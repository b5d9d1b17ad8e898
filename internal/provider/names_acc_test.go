package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// namesDataSourcesHCL reads the groups of prefix p through the data sources.
func namesDataSourcesHCL(p, g1, g2 string) string {
	return fmt.Sprintf(`
data "redisstreamcoordinator_group" "g1" {
  stream_prefix  = %[1]q
  consumer_group = %[2]q
}

data "redisstreamcoordinator_group" "g2" {
  stream_prefix  = %[1]q
  consumer_group = %[3]q
}

data "redisstreamcoordinator_producer_routing" "g2" {
  stream_prefix  = %[1]q
  consumer_group = %[3]q
}

data "redisstreamcoordinator_groups" "all" {
  stream_prefix = %[1]q
}

output "first_key" {
  value = provider::redisstreamcoordinator::stream_key(%[1]q, 0)
}
`, p, g1, g2)
}

// Groups created outside Terraform under names the server accepted but the
// conventional set does not contain (spaces, '@', '%', '?', '#', unicode,
// braces in a consumer group) are imported, read by data sources and scaled
// by the shard-count resource, with no name warning: they already exist.
func TestAccNames_existingGroupsWithAnyNameImportReadAndScale(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("Legacy Orders@v2 주문")
	g1, g2 := "svc@v2 {blue}", "결제 #1? 100%"
	a.createGroupOutOfBand(t, p, g1, 4)
	a.createGroupOutOfBand(t, p, g2, 4)

	const g1Addr, g2Addr = "redisstreamcoordinator_group.g1", "redisstreamcoordinator_group.g2"
	groups := groupHCL("g1", p, g1, "initial_shard_count = 4") + groupHCL("g2", p, g2, "initial_shard_count = 4")
	config := a.env.ProviderConfig() + groups
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				// An import block: the plan imports g1 with no change.
				Config: a.env.ProviderConfig() + groupHCL("g1", p, g1, "initial_shard_count = 4"), ResourceName: g1Addr, ImportState: true, ImportStateKind: resource.ImportBlockWithID,
				ImportStateId: p + "/" + g1,
				ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(g1Addr, plancheck.ResourceActionNoop),
				}},
			},
			{Config: config, ResourceName: g1Addr, ImportState: true, ImportStateId: p + "/" + g1, ImportStatePersist: true},
			{Config: config, ResourceName: g2Addr, ImportState: true, ImportStateId: p + "/" + g2, ImportStatePersist: true},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(g1Addr, tfjsonpath.New("id"), knownvalue.StringExact(p+"/"+g1)),
					statecheck.ExpectKnownValue(g2Addr, tfjsonpath.New("consumer_group"), knownvalue.StringExact(g2)),
					statecheck.ExpectKnownValue(g2Addr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(4)),
					statecheck.ExpectKnownValue(g2Addr, tfjsonpath.New("stream_key_pattern"), knownvalue.StringExact(p+":{shardIndex}")),
				},
				Check: a.diags.ExpectNoWarning("Unconventional"),
			},
			{
				// Re-import and compare with the state built from the config.
				Config: config, ResourceName: g2Addr, ImportState: true, ImportStateId: p + "/" + g2,
				ImportStateVerify: true, ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				Config: config + namesDataSourcesHCL(p, g1, g2),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.g1", tfjsonpath.New("consumer_group"), knownvalue.StringExact(g1)),
					statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.g1", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(4)),
					statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.g2", tfjsonpath.New("id"), knownvalue.StringExact(p+"/"+g2)),
					statecheck.ExpectKnownValue("data.redisstreamcoordinator_producer_routing.g2", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(4)),
					statecheck.ExpectKnownValue("data.redisstreamcoordinator_producer_routing.g2", tfjsonpath.New("stream_key_pattern"),
						knownvalue.StringExact(p+":{shardIndex}")),
					statecheck.ExpectKnownValue("data.redisstreamcoordinator_groups.all", tfjsonpath.New("groups"), knownvalue.ListSizeExact(2)),
					statecheck.ExpectKnownOutputValue("first_key", knownvalue.StringExact(p+":0")),
				},
			},
			{
				// Scale in through the shard-count resource: no consumers are
				// needed, and the stream-level scale rescales both groups.
				PreConfig: a.diags.Reset,
				Config:    config + shardCountHCL("test", p, g1, 2),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("id"), knownvalue.StringExact(p+"/"+g1)),
				},
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, g1, 2),
					a.migrationFinished(p, g2, 2),
					a.diags.ExpectNoWarning("Unconventional"),
				),
			},
		},
	})
}

// A NEW name outside the conventional set is allowed with a plan-time
// warning on the attribute; a conventional one, and the same resource once it
// exists, get none. Names no coordinator can address fail the plan.
func TestAccNames_newUnconventionalNameWarns(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, conventional := acctest.RandomName("new orders"), acctest.RandomName("orders")
	g := "svc@v2"
	config := a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 1") +
		groupHCL("plain", conventional, "svc", "initial_shard_count = 1")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config:      a.env.ProviderConfig() + groupHCL("bad", "a;b", "svc"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`contains ';'`),
			},
			{
				Config:      a.env.ProviderConfig() + groupHCL("bad", "orders", ".."),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`dot segment`),
			},
			{
				Config:      a.env.ProviderConfig() + groupHCL("bad", "orders{eu}", "svc"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`contains a brace`),
			},
			{
				Config: config,
				Check: resource.ComposeTestCheckFunc(
					a.diags.ExpectWarning("Unconventional stream prefix name", fmt.Sprintf("%q", p), "Shells"),
					a.diags.ExpectWarning("Unconventional consumer group name", `"svc@v2"`),
					a.diags.ExpectNoWarning("Unconventional", conventional),
					a.expectGroup(p, g, shardCountIs(1)),
				),
			},
			{
				// Already created: planning again does not warn.
				PreConfig:        a.diags.Reset,
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            a.diags.ExpectNoWarning("Unconventional"),
			},
		},
	})
}
