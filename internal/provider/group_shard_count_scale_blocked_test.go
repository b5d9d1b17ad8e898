package provider

import (
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// Found by the workflow campaign (seed 50): a shard count change of a prefix
// where another group's migration heads to another count (a scale-out whose
// group's consumer stalled, so it stays ACTIVE; the plan says the change
// waits for it). With wait_for = "ACCEPTED" the stream-level scale is
// refused 409 ACTIVE_MIGRATION_EXISTS; the take-over then scaled the groups
// before the blocked one, one by one with the per-group endpoint, and only
// then stopped at it: the prefix was left at two shard counts, which
// producers, routing with one count per prefix, cannot follow. Now the
// executor waits for it before sending anything (prefix.Decide), and sends
// nothing when it does not finish.
func TestAccGroupShardCount_blockedTakeOverLeavesThePrefixAtOneCount(t *testing.T) {
	// The lease and the rebalance timeout outlast the test: the stalled
	// member stays live, neither expired nor fenced, however slow the machine.
	a := newAccTest(t, acctest.Options{MemberLeaseTTL: time.Hour, RebalanceTimeout: time.Hour})
	c := a.env.RequireInRepo(t, "reads the audit log")
	p := acctest.RandomName("blocked")
	a.createConsumedGroupOutOfBand(t, p, "a", 1) // converges: its migration completes
	a.createGroupOutOfBand(t, p, "b", 1)
	a.env.JoinSilentMember(t, p, "b") // live, never converges: b's scale-out stays ACTIVE
	dsScaleOutOfBand(t, a.env, p, 2)
	waitForMigrationDone(t, a, p, "a")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			// The plan says the change waits for b's migration to finish
			// first, and under wait_for = "ACCEPTED" too the apply does
			// (issue 30), until its timeout: b never converges.
			Config:      a.env.ProviderConfig() + shardCountHCL("test", p, "a", 3, `wait_for = "ACCEPTED"`, "timeouts {\n    create = \"3s\"\n  }"),
			ExpectError: regexp.MustCompile(`(?s)another resharding is in progress.*group "b".*ACTIVE.*did not finish within the timeout`),
		}, {
			// Nothing was sent: the prefix is still at one count.
			Config:   a.env.ProviderConfig(),
			Check:    func(*terraform.State) error { return nil },
			PlanOnly: true,
		}},
	})
	for _, g := range []string{"a", "b"} {
		grp, err := a.group(t, p, g)
		if err != nil || grp.ShardCount != 2 {
			t.Errorf("group %q after the refused change: %+v, %v; want 2 shards, as its sibling", g, grp, err)
		}
	}
	if sent := terraformMutations(c, p, coordinator.ActionScaleGroup); len(sent) != 0 {
		t.Errorf("the refused change sent %d per-group scale(s), want none: %+v", len(sent), sent)
	}
	if grp, err := a.group(t, p, "b"); err != nil || grp.ActiveMigration == nil || grp.ActiveMigration.State != client.MigrationActive {
		t.Errorf("group b's migration must still be ACTIVE: %+v, %v", grp, err)
	}
}
