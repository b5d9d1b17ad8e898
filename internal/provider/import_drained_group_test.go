package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// A drained group (scaled to 0 shards) imports with initial_shard_count
// null, so `-generate-config-out` writes a valid configuration (0 is outside
// 1…1024) that plans nothing but the import; its shard count imports as 0.
func TestAccImport_drainedGroupGeneratesValidConfig(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("drained"), "svc"
	a.createGroupOutOfBand(t, p, g, 3)
	scaleOutOfBand(t, a, p, 0)
	waitForMigrationDone(t, a, p, g)
	for _, tc := range []struct {
		addr  string
		check plancheck.PlanCheck
	}{
		{groupAddr, plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("initial_shard_count"), knownvalue.Null())},
		{shardCountAddr, plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(0))},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: a.factories(),
				Steps: []resource.TestStep{{
					Config: a.env.ProviderConfig(), ResourceName: tc.addr,
					ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateId: p + "/" + g, GenerateConfig: true,
					ImportPlanChecks: resource.ImportPlanChecks{PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(tc.addr, plancheck.ResourceActionNoop), tc.check,
					}},
				}},
			})
		})
	}
}
