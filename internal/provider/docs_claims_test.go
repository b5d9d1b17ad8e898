package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// What the group page says of a new stream prefix without
// initial_shard_count: with no sibling to take the count from, the plan
// shows it as (known after apply), with its basis, and the create
// takes the coordinator's default, which the state then records.
func TestAccGroup_newPrefixWithoutInitialShardCountIsKnownAfterApply(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("docs-new-prefix"), acctest.RandomName("first")
	addr := "redisstreamcoordinator_group.first"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("first", p, g),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
				plancheck.ExpectUnknownValue(addr, tfjsonpath.New("initial_shard_count")),
				plancheck.ExpectUnknownValue(addr, tfjsonpath.New("shard_count")),
				plancheck.ExpectUnknownValue(addr, tfjsonpath.New("sibling_shard_counts")),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.CompareValuePairs(addr, tfjsonpath.New("initial_shard_count"), addr, tfjsonpath.New("shard_count"), compare.ValuesSame()),
			},
			Check: a.expectGroup(p, g, func(grp *client.Group) error {
				if grp.ShardCount < 1 {
					return fmt.Errorf("the group was created with %d shards, want the coordinator's default", grp.ShardCount)
				}
				return nil
			}),
		}},
	})
}
