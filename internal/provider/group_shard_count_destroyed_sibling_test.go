package provider

import (
	"fmt"
	"testing"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// TestAccGroupShardCount_siblingDestroyedFirstIsPutBackAsListed: a sibling that
// the same apply destroys before the count change is re-planned is put back as
// the plan's listing showed it, not at the count its own state recorded before
// an earlier stream scale moved it. Before, the re-plan during apply put it back
// at the stale count and refused the plan as stale ("group went from 4 to 6"),
// or, from a plan made with -refresh=false, failed with Terraform's
// "Provider produced inconsistent final plan". A move of g2 after a saved plan
// that deletes it is no reason to refuse the count change once g2 is deleted.
func TestAccGroupShardCount_siblingDestroyedFirstIsPutBackAsListed(t *testing.T) {
	for _, run := range []string{"apply", "saved plan without refresh", "saved plan, sibling moved after it"} {
		t.Run(run, func(t *testing.T) {
			skipUnlessAcc(t)
			a := newAccTest(t, acctest.Options{})
			p := acctest.RandomName("destroyed-sibling")
			head := fmt.Sprintf("terraform {\n  required_providers {\n    redisstreamcoordinator = { source = %q }\n  }\n}\n\nprovider \"redisstreamcoordinator\" {}\n", acctest.ProviderSource)
			g1 := groupHCL("g1", p, "g1", "initial_shard_count = 6")
			// g2 is destroyed before sc is re-planned: it depends on sc.
			g2 := groupHCL("g2", p, "g2", `deletion_policy = "DELETE"`, "depends_on = [redisstreamcoordinator_group_shard_count.sc]")
			sc := func(n int) string {
				return fmt.Sprintf(`
resource "redisstreamcoordinator_group_shard_count" "sc" {
  stream_prefix  = redisstreamcoordinator_group.g1.stream_prefix
  consumer_group = redisstreamcoordinator_group.g1.consumer_group
  shard_count    = %d
}
`, n)
			}
			cli := newActionCLI(t, a.env, head+g1+sc(6)+g2)
			if code, out := cli.run(a.env.Writer, "apply", "-auto-approve"); code != 0 {
				t.Fatalf("first apply exited %d:\n%s", code, out)
			}
			// The stream scale brings g2 to 4 too; g2's state keeps its create's count.
			cli.write(head + g1 + sc(4) + g2)
			if code, out := cli.run(a.env.Writer, "apply", "-auto-approve"); code != 0 {
				t.Fatalf("scale to 4 exited %d:\n%s", code, out)
			}
			waitForMigrationDone(t, a, p, "g1")
			waitForMigrationDone(t, a, p, "g2")
			cli.write(head + g1 + sc(2))
			var code int
			var out string
			switch run {
			case "apply":
				code, out = cli.run(a.env.Writer, "apply", "-auto-approve")
			default:
				args := []string{"plan", "-out=tfplan"}
				if run == "saved plan without refresh" {
					args = append(args, "-refresh=false")
				}
				if code, out = cli.run(a.env.Writer, args...); code != 0 {
					t.Fatalf("plan exited %d:\n%s", code, out)
				}
				if run == "saved plan, sibling moved after it" {
					// Another actor scales g2, which the plan deletes: nothing the apply does depends on it.
					if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "g2", 5, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
				}
				code, out = cli.run(a.env.Writer, "apply", "tfplan")
			}
			if code != 0 {
				t.Fatalf("the apply that destroys g2 and scales to 2 exited %d:\n%s", code, out)
			}
			expectOutput(t, "apply", out, `Destruction complete`, `Apply complete! Resources: 0 added, 1 changed, 1 destroyed`)
			if grp, err := a.group(t, p, "g1"); err != nil || grp.ShardCount != 2 {
				t.Errorf("g1 after the apply: %+v, %v; want 2 shards", grp, err)
			}
		})
	}
}
