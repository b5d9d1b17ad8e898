package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

func TestAccGroupsDataSource(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	p, other := acctest.RandomName("orders"), acctest.RandomName("payments")
	// Created out of name order: the list is sorted by the provider.
	dsCreateGroup(t, env, p, "svc-b", 3)
	dsCreateGroup(t, env, p, "svc-a", 3)
	dsCreateGroup(t, env, other, "svc-a", 7)
	empty := acctest.RandomName("nothing")

	group := func(prefix, name string, shards int64) knownvalue.Check {
		return knownvalue.ObjectPartial(map[string]knownvalue.Check{
			"id":                         knownvalue.StringExact(prefix + "/" + name),
			"stream_prefix":              knownvalue.StringExact(prefix),
			"consumer_group":             knownvalue.StringExact(name),
			"shard_count":                knownvalue.Int64Exact(shards),
			"state":                      knownvalue.StringExact("EMPTY"),
			"metadata_version":           knownvalue.Int64Exact(1),
			"active_migration":           knownvalue.Null(),
			"target_assignment_summary":  knownvalue.MapSizeExact(0),
			"current_assignment_summary": knownvalue.MapSizeExact(0),
		})
	}
	var diags acctest.Diagnostics
	steps := []resource.TestStep{{
		Check: diags.ExpectWarning(fmt.Sprintf("No groups under stream prefix %q", empty), "Prefixes are case-sensitive"),
		Config: env.ProviderConfigAs(env.Reader) + fmt.Sprintf(`
data "redisstreamcoordinator_groups" "orders" {
  stream_prefix = %q
}

data "redisstreamcoordinator_groups" "none" {
  stream_prefix = %q
}
`, p, empty),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue("data.redisstreamcoordinator_groups.orders", tfjsonpath.New("groups"),
				knownvalue.ListExact([]knownvalue.Check{group(p, "svc-a", 3), group(p, "svc-b", 3)})),
			statecheck.ExpectKnownValue("data.redisstreamcoordinator_groups.none", tfjsonpath.New("groups"), knownvalue.ListSizeExact(0)),
		},
	}}
	// Unfiltered, a fresh in-repo coordinator holds exactly these three
	// groups; a shared real one may hold more.
	if env.Coordinator != nil {
		steps = append(steps, resource.TestStep{
			PreConfig: diags.Reset,
			Check:     diags.ExpectNoWarning("No groups under stream prefix"),
			Config:    env.ProviderConfigAs(env.Reader) + `data "redisstreamcoordinator_groups" "all" {}`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_groups.all", tfjsonpath.New("stream_prefix"), knownvalue.Null()),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_groups.all", tfjsonpath.New("groups"), knownvalue.ListExact([]knownvalue.Check{
					group(p, "svc-a", 3), group(p, "svc-b", 3), group(other, "svc-a", 7),
				})),
			},
		})
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: diags.Factories(TypeName, testServer),
		Steps:                    steps,
	})
}

func TestAccGroupsDataSource_example(t *testing.T) {
	env := dsExampleEnv(t)
	dsCreateGroup(t, env, "orders", "order-service", 4)
	dsCreateGroup(t, env, "orders", "billing", 4)
	dsCreateGroup(t, env, "payments", "payments", 2)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: dsExampleConfig(t, env, "redisstreamcoordinator_groups"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orders_shard_counts", knownvalue.MapExact(map[string]knownvalue.Check{
					"billing": knownvalue.Int64Exact(4), "order-service": knownvalue.Int64Exact(4),
				})),
			},
		}},
	})
}
