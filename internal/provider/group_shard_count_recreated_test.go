package provider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// TestAccGroupShardCount_replacedGroupIsNoRegression: `terraform apply
// -replace` of a group with deletion_policy = "DELETE" deletes it and creates
// it again, at metadataVersion 1, below what the shard count resource of that
// group had seen (a consumer had joined, raising the version). That is
// Terraform's own replacement, not a metadata regression: the plan warns that
// the group is re-created, the shard count records the new group as its new
// baseline, and the next plan is empty instead of failing closed with the
// backup-restore runbook (issue 23 §2).
func TestAccGroupShardCount_replacedGroupIsNoRegression(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	t.Parallel()
	env := acctest.New(t, acctest.Options{})
	p, g := acctest.RandomName("replaced"), "svc"
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	tf, ctx := cliTerraform(t, tfBin)
	if err := os.MkdirAll(tf.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	config := env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 2", `deletion_policy = "DELETE"`, "force_delete = true") + `
resource "redisstreamcoordinator_group_shard_count" "test" {
  stream_prefix  = redisstreamcoordinator_group.test.stream_prefix
  consumer_group = redisstreamcoordinator_group.test.consumer_group
  shard_count    = 2
}
`
	if err := os.WriteFile(filepath.Join(tf.Dir, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) int { t.Helper(); return runCLI(ctx, t, tf, args...) }
	if code := run("apply", "-auto-approve"); code != 0 {
		t.Fatalf("first apply exited %d", code)
	}
	// A consumer joins: the shard count's high-water mark rises above 1.
	env.JoinSilentMember(t, p, g)
	if code := run("apply", "-auto-approve"); code != 0 {
		t.Fatalf("refreshing apply exited %d", code)
	}
	replaced := &strings.Builder{}
	tf.Stdout, tf.Stderr = replaced, replaced
	if code := run("apply", "-auto-approve", "-replace="+groupAddr); code != 0 {
		t.Fatalf("apply -replace exited %d:\n%s", code, replaced)
	}
	if want := "Group " + p + "/" + g + " is re-created by this apply"; !strings.Contains(replaced.String(), want) {
		t.Fatalf("the replacement's plan does not warn %q:\n%s", want, replaced)
	}
	if grp, err := env.Client().GetGroup(ctx, p, g); err != nil || grp.MetadataVersion != 1 {
		t.Fatalf("want the re-created group at metadataVersion 1: %+v %v", grp, err)
	}
	out := &strings.Builder{}
	tf.Stdout, tf.Stderr = out, out
	if code := run("plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after the replacement exited %d (want 0: empty, no regression):\n%s", code, out)
	}
	if c := env.Coordinator; c != nil {
		if sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(sent) != 0 {
			t.Fatalf("the replacement sent a scale: %+v", sent)
		}
	}
}
