package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// A scale-out of a prefix of two groups without a consumer: the plan leaves
// completes_by_itself and blocked_by to the apply (liveness moves by
// itself), and the apply's wait finds both migrations waiting for a
// consumer. State says what the apply's warnings say, as it does for a
// prefix of one group.
func TestAccGroupShardCount_twoGroupsWithoutConsumerRecordBlocked(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("idlepair")
	a.createGroupOutOfBand(t, p, "g1", 2)
	a.createGroupOutOfBand(t, p, "g2", 2)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", p, "g1", 4),
			ConfigStateChecks: append(expectShardCountState(4, "ACTIVE"),
				statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("completes_by_itself"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("blocked_by"),
					knownvalue.StringExact("scale-out of group(s) g1, g2, which have no live consumer")),
			),
			Check: resource.ComposeTestCheckFunc(
				a.diags.ExpectWarning(`Scale-out of group "g1" waits for a consumer`),
				a.diags.ExpectWarning(`Scale-out of group "g2" waits for a consumer`),
			),
		}},
	})
}
