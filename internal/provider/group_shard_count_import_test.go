package provider

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
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
	cli := newActionCLI(t, a.env, fmt.Sprintf(`
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
`, acctest.ProviderSource, p, g)+shardCountHCL("test", p, g, 3, `wait_for = "ACCEPTED"`))
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
