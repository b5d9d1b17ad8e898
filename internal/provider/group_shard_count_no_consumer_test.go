package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
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

// A scale-out planned while the group has a live consumer that leaves before
// the apply: whether the migration completes by itself was the consumer's to
// decide, so the plan leaves completes_by_itself and blocked_by to the apply,
// and state records what the apply found: the migration waits for a
// consumer. Before, the plan fixed completes_by_itself = true from the
// plan-time liveness of the group itself, and state kept it while the apply
// warned that the migration waits for a consumer.
func TestAccGroupShardCount_consumerLeftAfterThePlanRecordedBlocked(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("leftpl"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	member := a.env.StartConsumer(t, p, g)
	waitForGroup(t, a, p, g, func(grp *client.Group) bool { return grp.State != client.GroupEmpty })
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 2)},
			{
				Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 4),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(shardCountAddr, reshardingPath("completes_by_itself")),
					plancheck.ExpectUnknownValue(shardCountAddr, reshardingPath("blocked_by")),
					betweenPlanAndApply(func() {
						member.Stop()
						waitForGroup(t, a, p, g, func(grp *client.Group) bool { return grp.State == client.GroupEmpty })
					}),
				}},
				ConfigStateChecks: append(expectShardCountState(4, "ACTIVE"),
					statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("completes_by_itself"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("blocked_by"),
						knownvalue.StringExact("scale-out of group(s) svc, which have no live consumer")),
				),
				Check: a.diags.ExpectWarning(`Scale-out of group "svc" waits for a consumer`),
			},
		},
	})
}

// With wait_for = "ACCEPTED" the apply does not wait, so what it records of
// a scale-out with no consumer is its own decision's reading of the prefix:
// the migration does not complete by itself. Before, only the wait said so,
// and an apply that skipped it recorded completes_by_itself = true.
func TestAccGroupShardCount_acceptedScaleOutWithoutConsumerRecordBlocked(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("idleacc"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 2, `wait_for = "ACCEPTED"`)},
			{
				Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 4, `wait_for = "ACCEPTED"`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("migration_state"), knownvalue.StringExact("ACTIVE")),
					statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("completes_by_itself"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("blocked_by"),
						knownvalue.StringExact("scale-out of group(s) svc, which have no live consumer")),
				},
			},
		},
	})
}
