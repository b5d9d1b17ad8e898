package provider

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// A prefix moved since the last refresh: `terraform plan -refresh=false`
// compares with that refresh's record every time, so "plan again" alone
// loops. The refusal of a change of the count says the way out: a plan with
// a refresh, or `terraform apply -refresh-only`.
func TestAccGroupShardCount_planWithoutRefreshNamesTheRefresh(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	t.Parallel()
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("norefresh")
	a.createGroupOutOfBand(t, p, "g1", 4)
	a.createGroupOutOfBand(t, p, "g2", 4)
	config := func(n int) string {
		return fmt.Sprintf(`
terraform {
  required_providers {
    redisstreamcoordinator = { source = %q }
  }
}

provider "redisstreamcoordinator" {}
`, acctest.ProviderSource) + shardCountHCL("test", p, "g1", n)
	}
	cli := newActionCLI(t, a.env, config(4))
	if code, out := cli.run(a.env.Writer, "apply", "-auto-approve"); code != 0 {
		t.Fatalf("apply exited %d:\n%s", code, out)
	}
	// A change of the count is planned against the prefix as the last
	// refresh recorded it.
	cli.write(config(3))
	scaleOutOfBand(t, a, p, 1)
	waitForMigrationDone(t, a, p, "g1")
	waitForMigrationDone(t, a, p, "g2")
	for range 2 {
		code, out := cli.run(a.env.Writer, "plan", "-refresh=false")
		out = strings.ReplaceAll(out, " │ ", " ")
		if code == 0 || !strings.Contains(out, "Stale plan") || !strings.Contains(out, "without -refresh=false") ||
			!strings.Contains(out, "terraform apply -refresh-only") {
			t.Fatalf("plan -refresh=false after the prefix moved exited %d; want a stale-plan refusal naming the refresh:\n%s", code, out)
		}
	}
	if code, out := cli.run(a.env.Writer, "plan"); code != 0 {
		t.Fatalf("the refreshing plan exited %d; want it to plan the moved prefix:\n%s", code, out)
	}
}
