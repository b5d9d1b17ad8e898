package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// While this workspace waits for its scale, another replaces a sibling
// group of the prefix (DELETE, then POST at the new count): the new group
// does not know the old one's migration (404 MIGRATION_NOT_FOUND). A delete
// ends a group's migration (CONTRACT §4.4), so the wait stops tracking it and
// says who ended it; the coordinator was never unavailable.
func TestAccGroupShardCount_waitSurvivesSiblingReplacedElsewhere(t *testing.T) {
	a, c, p := siblingReplacedWhileWaiting(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			PreConfig:         func() { go whileWaiting(t, c, p, "g1", a.replaceG2(t, c, p, 2)) },
			Config:            a.env.ProviderConfig() + shardCountHCL("test", p, "g1", 2),
			ConfigStateChecks: expectShardCountState(2, "DEPRECATED"),
			Check: resource.ComposeTestCheckFunc(
				a.migrationFinished(p, "g1", 2),
				a.diags.ExpectWarning(`Group "g2" was deleted or replaced while this apply waited`, "MIGRATION_NOT_FOUND",
					"no longer waits for it"),
				a.diags.ExpectNoWarning("unavailable"),
			),
		}},
	})
}

// The same replace, at the count the prefix had: the prefix is split, and
// the apply does not end as if it were at one count.
func TestAccGroupShardCount_siblingReplacedAtAnotherCountFailsTheWait(t *testing.T) {
	a, c, p := siblingReplacedWhileWaiting(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			PreConfig:   func() { go whileWaiting(t, c, p, "g1", a.replaceG2(t, c, p, 4)) },
			Config:      a.env.ProviderConfig() + shardCountHCL("test", p, "g1", 2),
			ExpectError: diagRe("did not complete", "ended with its group", "while this apply waited", "prefix is split"),
		}},
	})
}

// siblingReplacedWhileWaiting is a prefix of g1 and g2 at 4 shards whose
// scale-ins stay DRAINING until released: a backlog on a removed key holds
// every scale-in of the prefix, so g2's is still awaited when it is replaced.
func siblingReplacedWhileWaiting(t *testing.T) (*accTest, *coordinator.Coordinator, string) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds the migrations and replaces a group while the provider waits")
	p := acctest.RandomName("replacedwait")
	a.createGroupOutOfBand(t, p, "g1", 4)
	a.createGroupOutOfBand(t, p, "g2", 4)
	c.SetUndrainedShard(p, "g1", 3, true)
	return a, c, p
}

// replaceG2 is another workspace's replace of g2, created again with
// shards, through the coordinator's API; then the held scale-ins go on.
func (a *accTest) replaceG2(t *testing.T, c *coordinator.Coordinator, p string, shards int32) func() {
	return func() {
		ctx := ctxT(t)
		m := client.Mutation{RequestedBy: "workspace-2", Reason: "replace g2"}
		if _, err := a.env.Client().DeleteGroup(ctx, p, "g2", false, m); err != nil {
			t.Errorf("out-of-band delete: %v", err)
		}
		if _, err := a.env.Client().CreateGroup(ctx, p, "g2", &shards, m); err != nil {
			t.Errorf("out-of-band create: %v", err)
		}
		c.SetUndrainedShard(p, "g1", 3, false)
	}
}
