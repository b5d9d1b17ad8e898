package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// A wait that fails before its first round (every listing answered 500
// from the wait's first on), whose group read after the wait fails too,
// records the group as the scale's answer implies: its count and migration,
// not the reading from before the scale (the record before a wait reads
// nothing). Recorded as read before the scale, the next plan without a
// refresh took the provider's own scale for another actor's ("Stale plan:
// … its shard count went from 4 to 3"); now it resumes the wait and sends
// no second scale.
func TestAccGroupShardCount_unreadAfterTheScaleRecordsWhatItImplies(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "fails the listings and group reads from the wait's first round on")
	p, g := acctest.RandomName("unread"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	cfg := func(n int) string {
		return fmt.Sprintf(`
terraform {
  required_providers {
    redisstreamcoordinator = { source = %q }
  }
}
provider "redisstreamcoordinator" {
  max_retries = 1
}
`, acctest.ProviderSource) + shardCountHCL("test", p, g, n)
	}
	cli := newActionCLI(t, a.env, cfg(4))
	if code, out := cli.run(a.env.Writer, "apply", "-auto-approve"); code != 0 {
		t.Fatalf("first apply exited %d:\n%s", code, out)
	}
	before, err := a.group(t, p, g)
	if err != nil {
		t.Fatal(err)
	}
	c.SetUndrainedShard(p, g, 3, true)
	failListingsOnceScaled(c, coordinator.Fault{Status: 500, Body: "down", OnMatch: func() {
		c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteGroup, Times: 1 << 20, Kind: coordinator.FaultRespond, Status: 500, Body: "down"})
	}})
	cli.write(cfg(3))
	code, out := cli.run(a.env.Writer, "apply", "-auto-approve")
	c.ClearFaults()
	if code == 0 {
		t.Fatalf("the apply whose wait could not read the coordinator succeeded:\n%s", out)
	}
	expectOutput(t, "the apply whose wait failed", out,
		`Error: Failed while waiting for the resharding of stream prefix "`+p+`" to 3 shards`,
		`Warning: Could not read group "svc" under stream prefix "`+p+`" after changing it`,
		`State records the group as the coordinator's answers imply: 3 shards, with migration reshard-\S+ \(4→3 shards\) ACTIVE`)

	raw, err := os.ReadFile(filepath.Join(cli.tf.Dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Instances []struct {
				Attributes map[string]any `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &st); err != nil || len(st.Resources) != 1 || len(st.Resources[0].Instances) != 1 {
		t.Fatalf("state: %v\n%s", err, raw)
	}
	attrs := st.Resources[0].Instances[0].Attributes
	if attrs["shard_count"] != float64(3) || attrs["migration_state"] != "ACTIVE" || attrs["metadata_version"] != float64(before.MetadataVersion) {
		t.Errorf("state after the failed wait: shard_count %v, migration_state %v, metadata_version %v; want 3, ACTIVE and the version read before the scale (%d)",
			attrs["shard_count"], attrs["migration_state"], attrs["metadata_version"], before.MetadataVersion)
	}

	// The next apply without a refresh resumes the wait: no stale plan, no
	// second scale.
	c.SetUndrainedShard(p, g, 3, false)
	if code, out := cli.run(a.env.Writer, "apply", "-refresh=false", "-auto-approve"); code != 0 {
		t.Fatalf("the apply without a refresh after the failed wait exited %d, want it to resume the wait:\n%s", code, out)
	}
	if events := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP"); len(events) != 1 {
		t.Errorf("want the one scale of the first apply, got %d: %+v", len(events), events)
	}
	if grp, err := a.group(t, p, g); err != nil || grp.ShardCount != 3 || grp.ActiveMigration != nil {
		t.Errorf("after the resumed wait: %+v, %v; want 3 shards and nothing under way", grp, err)
	}
}

// A wait whose listing is refused (403: the credentials lost the READ role
// mid-apply) says what the coordinator answered and what to do; it does not
// blame the coordinator's availability or point at max_retries, as it did
// for every failure of a wait.
func TestAccGroupShardCount_waitRefusedSaysSo(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "refuses the listings from the wait's first round on")
	p, g := acctest.RandomName("waitref"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	cfg := func(n int) string { return a.env.ProviderConfig() + shardCountHCL("test", p, g, n) }
	cli := newActionCLI(t, a.env, cfg(4))
	if code, out := cli.run(a.env.Writer, "apply", "-auto-approve"); code != 0 {
		t.Fatalf("first apply exited %d:\n%s", code, out)
	}
	c.SetUndrainedShard(p, g, 3, true)
	failListingsOnceScaled(c, coordinator.Fault{Status: 403})
	cli.write(cfg(3))
	code, out := cli.run(a.env.Writer, "apply", "-auto-approve")
	c.ClearFaults()
	if code == 0 {
		t.Fatalf("the apply whose wait was refused succeeded:\n%s", out)
	}
	expectOutput(t, "the apply whose wait was refused", out,
		`Error: Failed while waiting for the resharding of stream prefix "`+p+`" to 3 shards`, `403`,
		`The scale was accepted, and the next terraform apply resumes waiting without sending another scale, once the cause above is fixed`)
	if flat := strings.Join(strings.Fields(out), " "); strings.Contains(flat, "stayed unavailable") {
		t.Errorf("a refused listing was blamed on availability:\n%s", out)
	}
}

// failListingsOnceScaled answers every listing with listing (its status,
// body and hook) from the arrival of the stream scale on: the wait's rounds
// and every read after them fail, the executor's reading before it does not.
func failListingsOnceScaled(c *coordinator.Coordinator, listing coordinator.Fault) {
	listing.Method, listing.Route, listing.Times, listing.Kind = "GET", coordinator.RouteMonitoringGroups, 1<<20, coordinator.FaultRespond
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteStreamScale, Kind: coordinator.FaultDelay,
		OnMatch: func() { c.InjectFault(listing) }})
}
