package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// expectNoDriftOf fails when the plan's resource_drift (what `terraform plan`
// prints under "Objects have changed outside of Terraform") lists addr.
type expectNoDriftOf string

func (addr expectNoDriftOf) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceDrift {
		if rc.Address == string(addr) {
			b, _ := json.Marshal(rc.Change)
			resp.Error = fmt.Errorf("%s is reported as changed outside of Terraform: %s", addr, b)
		}
	}
}

// TestAccGroup_ownScaleIsNotDriftOfTheGroup: the group resource's shard_count
// must not show the provider's own scale (by the shard-count resource of the
// same configuration) as changed outside of Terraform (issue 10.6).
func TestAccGroup_ownScaleIsNotDriftOfTheGroup(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("owndrift"), "svc"
	config := func(n int) string {
		return a.env.ProviderConfig() + groupHCL("group", p, g, "initial_shard_count = 2") +
			shardCountHCL("test", p, g, n, "depends_on = [redisstreamcoordinator_group.group]")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(2)},
			{
				PreConfig: func() {
					a.env.StartConsumer(t, p, g)
					waitForLiveMember(t, a, p, g)
				},
				Config: config(4),
				Check:  a.migrationFinished(p, g, 4),
			},
			{
				Config: config(4),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectEmptyPlan(),
						expectNoDriftOf("redisstreamcoordinator_group.group"),
					},
				},
			},
		},
	})
}
