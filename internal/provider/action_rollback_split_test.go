package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// rollbackActionsHCL declares a prefix-wide rollback ("prefix") and a
// rollback of group g ("one") of prefix p, for terraform plan/apply -invoke.
func rollbackActionsHCL(p, g string) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    redisstreamcoordinator = {
      source = %[1]q
    }
  }
}

provider "redisstreamcoordinator" {}

action "redisstreamcoordinator_rollback_migration" "prefix" {
  config {
    stream_prefix = %[2]q
    reason        = "test: undo the scale-out"
  }
}

action "redisstreamcoordinator_rollback_migration" "one" {
  config {
    stream_prefix  = %[2]q
    consumer_group = %[3]q
    reason         = "test: undo the scale-out of one group"
  }
}
`, acctest.ProviderSource, p, g)
}

// TestAccActionsCLI_RollbackNeverSplitsPrefix: a stream-level scale-out of
// a prefix whose group "a" has a consumer (its migration completes,
// DEPRECATED) and whose group "b" has none (its migration stays ACTIVE). A
// prefix-wide rollback would put b back at the old count while a keeps the
// new one: `terraform plan -invoke` already refuses it, naming each group's
// count and how to bring the prefix back to one, and `apply -invoke` sends
// nothing. A rollback of b alone is sent, and its plan and invocation say
// that it leaves the prefix at different counts.
func TestAccActionsCLI_RollbackNeverSplitsPrefix(t *testing.T) {
	skipUnlessActions(t)
	t.Parallel()
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("rbsplit")
	a.createConsumedGroupOutOfBand(t, p, "a", 2)
	a.createGroupOutOfBand(t, p, "b", 2)
	scaleOutOfBand(t, a, p, 4)
	waitForMigrationDone(t, a, p, "a") // its consumer converges: DEPRECATED
	if grp, err := a.group(t, p, "b"); err != nil || grp.ActiveMigration == nil || grp.ActiveMigration.State != client.MigrationActive {
		t.Fatalf("group b must be ACTIVE with no consumer: %+v, %v", grp, err)
	}
	cli := newActionCLI(t, a.env, rollbackActionsHCL(p, "b"))
	const prefixWide, oneGroup = "-invoke=action.redisstreamcoordinator_rollback_migration.prefix", "-invoke=action.redisstreamcoordinator_rollback_migration.one"

	refusal := []string{
		fmt.Sprintf(`Error: The invocation will refuse to roll back stream prefix "%s": it would leave the prefix at different shard counts`, p),
		`group "a": 4 shards, keeps its count \(migration reshard-\S+, 2→4 shards, DEPRECATED since \S+: completed, no rollback undoes it\)`,
		`group "b": 4 shards, back to 2 \(migration reshard-\S+, 2→4 shards, ACTIVE since \S+: would be rolled back\)`,
		`let the ACTIVE migration\(s\) of "b" complete`,
		`return to 2: roll back each ACTIVE group by itself \(set consumer_group\), then scale the whole prefix to 2 with redisstreamcoordinator_group_shard_count \(shard_count = 2\)`,
		`Nothing was sent to the coordinator`,
	}
	code, out := cli.run(a.env.Reader, "plan", prefixWide)
	if code == 0 {
		t.Fatalf("terraform plan %s succeeded for a rollback that splits the prefix:\n%s", prefixWide, out)
	}
	expectOutput(t, "plan -invoke of the prefix", out, refusal...)
	code, out = cli.run(a.env.Writer, "apply", "-auto-approve", prefixWide)
	if code == 0 {
		t.Fatalf("terraform apply %s succeeded for a rollback that splits the prefix:\n%s", prefixWide, out)
	}
	expectOutput(t, "apply -invoke of the prefix", out, refusal...)
	if c := a.env.Coordinator; c != nil {
		if sent := auditEvents(c, p, coordinator.ActionRollbackMigration); len(sent) != 0 {
			t.Fatalf("the refused prefix-wide rollback sent %d rollback(s): %+v", len(sent), sent)
		}
	}
	for _, g := range []string{"a", "b"} {
		if grp, err := a.group(t, p, g); err != nil || grp.ShardCount != 4 {
			t.Fatalf("group %s after the refusal: %+v, %v; want 4 shards", g, grp, err)
		}
	}

	split := []string{fmt.Sprintf(`This leaves stream prefix "%s" at different shard counts: group "b" goes back to 2 shards, `+
		`and the prefix's other groups keep theirs: "a" \(4 shards\)`, p), `scale it with redisstreamcoordinator_group_shard_count`}
	code, out = cli.run(a.env.Reader, "plan", oneGroup)
	if code != 0 {
		t.Fatalf("terraform plan %s exited %d:\n%s", oneGroup, code, out)
	}
	expectOutput(t, "plan -invoke of one group", out,
		append([]string{fmt.Sprintf(`Warning: The invocation will roll back 1 migration\(s\) of group "b" under stream prefix "%s"`, p)}, split...)...)
	code, out = cli.run(a.env.Writer, "apply", "-auto-approve", oneGroup)
	if code != 0 {
		t.Fatalf("terraform apply %s exited %d:\n%s", oneGroup, code, out)
	}
	expectOutput(t, "apply -invoke of one group", out,
		append([]string{fmt.Sprintf(`Warning: Stream prefix "%s" is at different shard counts`, p), `of group "b" is ROLLED_BACK`}, split...)...)
	for g, want := range map[string]int32{"a": 4, "b": 2} {
		if grp, err := a.group(t, p, g); err != nil || grp.ShardCount != want {
			t.Errorf("group %s after rolling back b: %+v, %v; want %d shards", g, grp, err, want)
		}
	}
	if strings.Contains(out, "Error:") {
		t.Errorf("the one-group rollback reported an error:\n%s", out)
	}
}
