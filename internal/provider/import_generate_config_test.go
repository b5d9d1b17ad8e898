package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// TestAccImport_generateConfigOut imports both resources with import blocks
// and `terraform plan -generate-config-out`: the generated configuration must
// be usable as is, i.e. plan nothing but the import.
func TestAccImport_generateConfigOut(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("generated"), "svc"
	a.createGroupOutOfBand(t, p, g, 7)
	for _, addr := range []string{groupAddr, shardCountAddr} {
		t.Run(addr, func(t *testing.T) { testGenerateConfigOut(t, a, addr, p, g) })
	}
}

func testGenerateConfigOut(t *testing.T, a *accTest, addr, p, g string) {
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:          a.env.ProviderConfig(),
			ResourceName:    addr,
			ImportState:     true,
			ImportStateKind: resource.ImportBlockWithID,
			ImportStateId:   p + "/" + g,
			GenerateConfig:  true,
			ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop),
				plancheck.ExpectKnownValue(addr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(7)),
			}},
		}},
	})
}
