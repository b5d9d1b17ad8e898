package provider

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// TestAccGroupShardCount_importThatScalesLeavesNoImportMark: an import block
// whose plan also changes the count (import and update in one apply) leaves
// no import mark behind: a later `plan -refresh=false` is no import's plan
// and does not report the migration under way as found at import.
func TestAccGroupShardCount_importThatScalesLeavesNoImportMark(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	t.Parallel()
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("impscale"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	cli := newActionCLI(t, a.env, shardCountImportConfig(p, g)+shardCountHCL("test", p, g, 3, `wait_for = "ACCEPTED"`))
	// No consumer: the scale-out stays ACTIVE, under way, after the apply.
	if code, out := cli.run(a.env.Writer, "apply", "-auto-approve"); code != 0 {
		t.Fatalf("apply of the import with a scale exited %d:\n%s", code, out)
	}
	grp, err := a.group(t, p, g)
	if err != nil || grp.ActiveMigration == nil || grp.ActiveMigration.ToShardCount != 3 {
		t.Fatalf("after the apply: %+v, %v; want a migration to 3 under way", grp, err)
	}
	code, out := cli.run(a.env.Writer, "plan", "-refresh=false")
	if code != 0 {
		t.Fatalf("plan -refresh=false exited %d:\n%s", code, out)
	}
	if strings.Contains(out, "Importing the shard count") {
		t.Fatalf("a plan after the import's apply is planned as the import's own:\n%s", out)
	}
}

// TestAccGroupShardCount_importOfMigrationUnderWayLeavesNoImportMark: an
// import block of a DRAINING migration to the configured count plans and
// applies nothing but the import. Terraform saves the import's refreshed
// private state as it is (a no-op has no planned private state), so the
// import mark survives into state; a later `plan -refresh=false`, in another
// provider instance, is still no import's plan: it waits for the migration
// the import recorded, like the refreshing plan after it. Under every CLI.
func TestAccGroupShardCount_importOfMigrationUnderWayLeavesNoImportMark(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	t.Parallel()
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds a migration DRAINING through the in-repo coordinator's hook")
	p, g := acctest.RandomName("impdrain"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	c.SetUndrainedShard(p, g, 3, true)
	scaleOutOfBand(t, a, p, 3)
	waitForGroup(t, a, p, g, migrationIn(client.MigrationDraining))
	cli := newActionCLI(t, a.env, shardCountImportConfig(p, g)+shardCountHCL("test", p, g, 3, ""))
	audited := len(c.AuditEvents())
	code, out := cli.run(a.env.Writer, "apply", "-auto-approve")
	if code != 0 {
		t.Fatalf("apply of the import exited %d:\n%s", code, out)
	}
	if !strings.Contains(out, "Importing the shard count") || !strings.Contains(out, "1 imported, 0 added, 0 changed") {
		t.Fatalf("the import's apply is not an import that reports the migration under way:\n%s", out)
	}
	if events := c.AuditEvents(); len(events) != audited {
		t.Fatalf("the import sent %d audited mutation(s), want none", len(events)-audited)
	}
	for _, args := range [][]string{{"plan", "-refresh=false", "-detailed-exitcode"}, {"plan", "-detailed-exitcode"}} {
		code, out := cli.run(a.env.Writer, args...)
		if code != 2 || strings.Contains(out, "Importing the shard count") || !strings.Contains(out, "is already under way") {
			t.Fatalf("%v after the import exited %d; want 2, an update that waits for the DRAINING migration, not the import's plan:\n%s", args, code, out)
		}
	}
	c.SetUndrainedShard(p, g, 3, false)
	waitForMigrationDone(t, a, p, g)
	if code, out := cli.run(a.env.Writer, "plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan once the migration completed exited %d, want 0:\n%s", code, out)
	}
}

// TestAccGroupShardCount_importOfASplitPrefixThatChangesAnAttribute:
// campaign seed 826794327. An import block of a split prefix's shard count
// whose plan also changes an attribute (wait_for): Terraform plans it again
// during apply in another provider instance, which is no import's plan, so
// the import's plan is planned like any other: the split prefix's repair.
// Before the fix the import's plan only reported the split, the re-plan
// planned the repair, and the apply failed with "Provider produced
// inconsistent final plan".
func TestAccGroupShardCount_importOfASplitPrefixThatChangesAnAttribute(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	t.Parallel()
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("impsplit")
	a.createGroupOutOfBand(t, p, "a", 4)
	a.createGroupOutOfBand(t, p, "b", 4)
	if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "b", 2, outOfBandMutation()); err != nil {
		t.Fatal(err)
	}
	waitForGroup(t, a, p, "b", func(g *client.Group) bool { return g.ShardCount == 2 && g.ActiveMigration.Finished() })
	cli := newActionCLI(t, a.env, shardCountImportConfig(p, "a")+shardCountHCL("test", p, "a", 4, `wait_for = "ACCEPTED"`))
	code, out := cli.run(a.env.Writer, "apply", "-auto-approve")
	if code != 0 || strings.Contains(out, "inconsistent final plan") {
		t.Fatalf("apply of the import exited %d:\n%s", code, out)
	}
	if !strings.Contains(out, "1 imported, 0 added, 1 changed") || !strings.Contains(out, "is split") {
		t.Fatalf("want the import applied with the split prefix's repair:\n%s", out)
	}
	grp, err := a.group(t, p, "b")
	if err != nil || grp.ShardCount != 4 {
		t.Fatalf("group b after the repair: %+v, %v; want 4 shards", grp, err)
	}
}

// shardCountImportConfig is a configuration for the terraform CLI (the
// provider from the environment, newActionCLI) with an import block of
// group {p, g} into redisstreamcoordinator_group_shard_count.test.
func shardCountImportConfig(p, g string) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    redisstreamcoordinator = { source = %q }
  }
}

provider "redisstreamcoordinator" {}

import {
  to = redisstreamcoordinator_group_shard_count.test
  id = "%s/%s"
}
`, acctest.ProviderSource, p, g)
}
