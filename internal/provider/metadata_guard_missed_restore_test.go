package provider

import (
	"regexp"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// TestAccMetadataGuard_refreshOnlyRecordsARestoreBeforeChurnHidesIt: a
// restore that a plan detected is lost when nothing is saved before
// consumers rejoin and lift metadataVersion above the old high-water mark (a
// plan that fails closed saves nothing). The runbook's first step, `terraform
// apply -refresh-only`, saves the record: it succeeds while plans fail
// closed, and after the churn the plan still fails closed, until the value
// the error names is applied (issue 23 §2: a restore is never missed).
func TestAccMetadataGuard_refreshOnlyRecordsARestoreBeforeChurnHidesIt(t *testing.T) {
	skipUnlessAcc(t)
	for _, tc := range guardedResources {
		t.Run(tc.name, func(t *testing.T) {
			a := newAccTest(t, acctest.Options{MemberLeaseTTL: time.Minute})
			c := a.env.RequireInRepo(t, "restores the group's stored state from an older copy")
			p, g := acctest.RandomName("rvrestore"), "svc"
			if tc.external {
				a.createGroupOutOfBand(t, p, g, 2)
			}
			joins := func(n int) {
				for range n {
					a.env.JoinSilentMember(t, p, g)
				}
			}
			cli := newActionCLI(t, a.env, a.env.ProviderConfig()+tc.config(p, g))
			apply := func(what string, args ...string) {
				t.Helper()
				if code, out := cli.run(a.env.Writer, append([]string{"apply", "-auto-approve"}, args...)...); code != 0 {
					t.Fatalf("%s exited %d:\n%s", what, code, out)
				}
			}
			apply("first apply")
			backup, ok := c.BackupGroup(p, g)
			if !ok {
				t.Fatal("no backup")
			}
			joins(3)
			apply("refreshing apply")
			c.RestoreGroup(backup)
			code, out := cli.run(a.env.Writer, "plan")
			if code == 0 {
				t.Fatalf("the plan after the restore succeeded:\n%s", out)
			}
			expectOutput(t, "plan after the restore", out, `regressed: the plan fails closed`,
				"1\\. Run `terraform apply -refresh-only` now")
			apply("the runbook's first step", "-refresh-only")
			// Consumers rejoin (a rolling restart after the restore), past
			// the old high-water mark.
			joins(4)
			code, out = cli.run(a.env.Writer, "plan")
			if code == 0 {
				t.Fatalf("the plan after churn lifted the version past the old high-water mark succeeded: the restore was missed:\n%s", out)
			}
			expectOutput(t, "plan after churn", out, `regressed: the plan fails closed`, `set acknowledged_metadata_version = 1 `)
			cli.write(a.env.ProviderConfig() + tc.config(p, g, "acknowledged_metadata_version = 1"))
			apply("the way out")
			if code, out := cli.run(a.env.Writer, "plan", "-detailed-exitcode"); code != 0 {
				t.Fatalf("the plan after the acknowledgement exited %d, want 0 (empty):\n%s", code, out)
			}
			if sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "DELETE_GROUP", "ROLLBACK_MIGRATION"); len(sent) != 0 {
				t.Fatalf("Terraform mutated a group whose metadata regressed: %+v", sent)
			}
		})
	}
}

// TestAccMetadataGuard_lostMigrationIsARegression: the store of a group is
// restored from a backup taken before the shard count's scale, and consumers
// rejoin past the old high-water mark before any refresh saw it: the version
// no longer shows the restore, but the migration recorded in state is unknown
// to the coordinator (404 MIGRATION_NOT_FOUND), which only a
// delete-and-recreate or a restore makes (CONTRACT §4). The plan fails closed
// with the runbook; `apply -refresh-only` records it; after more churn the
// value the error named still acknowledges it, and the plan is then empty.
func TestAccMetadataGuard_lostMigrationIsARegression(t *testing.T) {
	skipUnlessAcc(t)
	a := newAccTest(t, acctest.Options{MemberLeaseTTL: time.Minute})
	c := a.env.RequireInRepo(t, "restores the group's stored state from an older copy")
	p, g := acctest.RandomName("lostmig"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	backup, ok := c.BackupGroup(p, g)
	if !ok {
		t.Fatal("no backup")
	}
	joins := func(n int) {
		for range n {
			a.env.JoinSilentMember(t, p, g)
		}
	}
	config := func(n int, extra ...string) string {
		return a.env.ProviderConfig() + shardCountHCL("test", p, g, n, append([]string{`wait_for = "ACCEPTED"`}, extra...)...)
	}
	cli := newActionCLI(t, a.env, config(3))
	apply := func(what string, args ...string) {
		t.Helper()
		if code, out := cli.run(a.env.Writer, append([]string{"apply", "-auto-approve"}, args...)...); code != 0 {
			t.Fatalf("%s exited %d:\n%s", what, code, out)
		}
	}
	apply("the scale") // no consumer: the migration stays ACTIVE, recorded in state
	seen, err := a.group(t, p, g)
	if err != nil {
		t.Fatal(err)
	}
	c.RestoreGroup(backup)
	for {
		// Consumers rejoin past the high-water mark the state recorded.
		joins(1)
		if grp, err := a.group(t, p, g); err != nil || grp.MetadataVersion > seen.MetadataVersion {
			break
		}
	}
	code, out := cli.run(a.env.Writer, "plan")
	if code == 0 {
		t.Fatalf("the plan after a restore hidden by churn succeeded: the restore was missed:\n%s", out)
	}
	expectOutput(t, "plan after the restore", out, `regressed: the plan fails closed`, `recorded migration reshard-\S+`,
		`MIGRATION_NOT_FOUND`, "1\\. Run `terraform apply -refresh-only` now")
	named := regexp.MustCompile(`set acknowledged_metadata_version = (\d+) `).FindStringSubmatch(out)
	if named == nil {
		t.Fatalf("the error names no value to acknowledge:\n%s", out)
	}
	apply("the runbook's first step", "-refresh-only")
	joins(2)
	if code, out := cli.run(a.env.Writer, "plan"); code == 0 {
		t.Fatalf("the plan after the recorded regression and more churn succeeded:\n%s", out)
	}
	// The restored group has 2 shards: the operator keeps them and
	// acknowledges the value the first error named.
	cli.write(config(2, "acknowledged_metadata_version = "+named[1]))
	apply("the way out")
	if code, out := cli.run(a.env.Writer, "plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after the acknowledgement exited %d, want 0 (empty):\n%s", code, out)
	}
	if sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP"); len(sent) != 1 {
		t.Fatalf("want the one scale before the restore, got %d: %+v", len(sent), sent)
	}
}
