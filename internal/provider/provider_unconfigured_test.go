package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// endpointReplaced is a configuration of providerConfigUnknownAtPlan whose
// terraform_data is replaced by the next plan, so that the provider's
// endpoint is unknown again while resources of the provider are in state: a
// coordinator deployed by the same configuration being redeployed.
func endpointReplaced(config, generation string) string {
	const block = `resource "terraform_data" "endpoint" {`
	return strings.Replace(config, block, block+"\n  triggers_replace = \""+generation+"\"", 1)
}

// TestAccUnconfiguredProvider_resourcesInState: a plan whose provider
// configuration is unknown while a group and its shard count are in state
// refreshes neither (there is no coordinator to ask), says so, and plans no
// change for them; it used to crash the provider ("Plugin did not respond").
func TestAccUnconfiguredProvider_resourcesInState(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("unconfstate"), "svc"
	config := a.providerConfigUnknownAtPlan() + groupHCL("test", p, g, "initial_shard_count = 2") +
		shardCountHCL("test", p, g, 2, "depends_on = [redisstreamcoordinator_group.test]")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				Config: endpointReplaced(config, "2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("terraform_data.endpoint", plancheck.ResourceActionReplace),
					plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionNoop),
				}},
				Check: resource.ComposeTestCheckFunc(
					a.diags.ExpectWarning("Group not refreshed", "known only after apply"),
					a.diags.ExpectWarning("Shard count not refreshed", "known only after apply"),
					a.expectGroup(p, g, shardCountIs(2)),
				),
			},
		},
	})
}
