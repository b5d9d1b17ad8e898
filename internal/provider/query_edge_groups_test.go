package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// edgeFixture is what a coordinator can hold and a query must bring under
// management: every kind of name the server accepts (CONTRACT §14), 0
// shards, large counts, a prefix at two counts, and a migration in every
// state a group can be found in. Each prefix's state is set up by setup.
type edgePrefix struct {
	prefix string
	groups []string
	shards int32
	// setup brings the prefix into its state after its groups are created.
	setup func(t *testing.T, a *accTest, c *coordinator.Coordinator, p string)
	// want checks the state setup reached, before the query.
	want func(g *client.Group) bool
}

func migrationIn(state client.MigrationState) func(*client.Group) bool {
	return func(g *client.Group) bool { return g.ActiveMigration != nil && g.ActiveMigration.State == state }
}

func noMigration(g *client.Group) bool { return g.ActiveMigration == nil }

func edgeFixture() []edgePrefix {
	scaleTo := func(n int32) func(*testing.T, *accTest, *coordinator.Coordinator, string) {
		return func(t *testing.T, a *accTest, _ *coordinator.Coordinator, p string) { scaleOutOfBand(t, a, p, n) }
	}
	return []edgePrefix{
		{prefix: "Legacy Orders", groups: []string{"svc@v2", "Zahlungsströme", "订单 服务", "a{b}", "q?x#y", "50% off", " padded "}, shards: 3, want: noMigration},
		{prefix: "заказы:v1", groups: []string{"svc"}, shards: 2, want: noMigration},
		{prefix: "drained", groups: []string{"a", "b"}, shards: 3, setup: scaleTo(0), want: func(g *client.Group) bool { return g.ShardCount == 0 && noMigration(g) }},
		{prefix: "large", groups: []string{"svc"}, shards: 5000, want: noMigration},
		{prefix: "int32-max", groups: []string{"svc"}, shards: math.MaxInt32, want: noMigration},
		{prefix: "split", groups: []string{"a", "b"}, shards: 2, want: noMigration,
			setup: func(t *testing.T, a *accTest, _ *coordinator.Coordinator, p string) {
				if _, err := a.env.Client().ScaleGroup(ctxT(t), p, "b", 1, outOfBandMutation()); err != nil {
					t.Fatal(err)
				}
				waitForMigrationDone(t, a, p, "b")
			}},
		{prefix: "preparing", groups: []string{"svc"}, shards: 2, want: migrationIn(client.MigrationPreparing),
			setup: func(t *testing.T, a *accTest, c *coordinator.Coordinator, p string) {
				c.FailProvisioning(coordinator.ProvisioningFault{StreamPrefix: p, Operation: coordinator.ProvisionScale, AfterShards: 1, Times: 100})
				if _, err := a.env.Client().ScaleStream(ctxT(t), p, 4, outOfBandMutation()); client.ErrorCode(err) != client.CodeRedisStreamProvisioningFailed {
					t.Fatalf("scale with failing provisioning: %v, want 503 %s", err, client.CodeRedisStreamProvisioningFailed)
				}
			}},
		{prefix: "active", groups: []string{"a", "b"}, shards: 2, setup: scaleTo(4), want: migrationIn(client.MigrationActive)},
		{prefix: "draining", groups: []string{"svc"}, shards: 4, want: migrationIn(client.MigrationDraining),
			setup: func(t *testing.T, a *accTest, c *coordinator.Coordinator, p string) {
				c.SetUndrainedShard(p, "svc", 3, true)
				scaleOutOfBand(t, a, p, 3)
			}},
		{prefix: "deprecated", groups: []string{"svc"}, shards: 4, setup: scaleTo(2), want: func(g *client.Group) bool { return g.ShardCount == 2 && noMigration(g) }},
		{prefix: "rolled-back", groups: []string{"svc"}, shards: 2, want: func(g *client.Group) bool { return g.ShardCount == 2 && noMigration(g) },
			setup: func(t *testing.T, a *accTest, _ *coordinator.Coordinator, p string) {
				scaleOutOfBand(t, a, p, 5)
				grp, err := a.group(t, p, "svc")
				if err != nil || grp.ActiveMigration == nil {
					t.Fatalf("no migration to roll back: %+v, %v", grp, err)
				}
				if _, err := a.env.Client().RollbackMigration(ctxT(t), p, "svc", grp.ActiveMigration.ReshardingID, outOfBandMutation()); err != nil {
					t.Fatal(err)
				}
			}},
	}
}

// TestAccQueryImport_edgeGroups: whatever the coordinator holds can be
// imported, listed and planned. On a coordinator holding edgeFixture,
// `terraform query -generate-config-out` writes a configuration whose plan
// is imports only (nothing to add, change or destroy, no error) and its
// apply sends no mutation. The next plan waits for the DRAINING migration
// the import recorded and repairs the split prefix (a split prefix is
// drift, issue 30 §1: which way depends on the count the generated
// configuration took from the group the query listed first).
func TestAccQueryImport_edgeGroups(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	t.Parallel()
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	if isTofu, err := acctest.IsOpenTofu(tfBin); err != nil {
		t.Fatal(err)
	} else if isTofu {
		t.Skip("OpenTofu has no list resources and no `query` command")
	}
	skipUnlessTerraform(t, tfBin, tfversion.SkipBelow(tfversion.Version1_14_0))
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds migrations PREPARING and DRAINING, uses fixed names, and reads the audit log")

	groups := 0
	fixture := edgeFixture()
	for _, ep := range fixture {
		for _, g := range ep.groups {
			a.createGroupOutOfBand(t, ep.prefix, g, ep.shards)
			groups++
		}
		if ep.setup != nil {
			ep.setup(t, a, c, ep.prefix)
		}
	}
	for _, ep := range fixture {
		// The last group of the prefix reached the state (split: both, checked by their counts below).
		waitForGroup(t, a, ep.prefix, ep.groups[len(ep.groups)-1], ep.want)
	}

	tf, ctx := cliTerraform(t, tfBin)
	query := exampleFileText(t, groupListExample) + "\n" + exampleFileText(t, shardCountListExample)
	writeWorkFiles(t, tf.Dir, map[string]string{"main.tf": a.env.ProviderConfig(), "coordinator.tfquery.hcl": query})
	if code := runCLI(ctx, t, tf, "query", "-generate-config-out=generated.tf"); code != 0 {
		t.Fatalf("terraform query exited %d", code)
	}
	generated, err := os.ReadFile(filepath.Join(tf.Dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	checkGeneratedConfig(t, string(generated), groups, len(fixture))
	if code := runCLI(ctx, t, tf, "plan", "-input=false", "-out=import.tfplan"); code != 0 {
		t.Fatalf("terraform plan of the generated configuration exited %d", code)
	}
	checkImportOnlyPlan(ctx, t, tf, "import.tfplan", groups, len(fixture))
	// The import's plan says what each group is in the middle of.
	if log, ok := tf.Stdout.(*strings.Builder); !ok {
		t.Fatalf("terraform's output goes to a %T, not the test's log", tf.Stdout)
	} else {
		out := strings.Join(strings.Fields(log.String()), " ")
		expectOutput(t, "plan of the generated configuration", out,
			`Warning: Importing the shard count of stream prefix "draining" while a resharding is under way .*migration reshard-\S+ \(4→3 shards\) is already under way since \S+, now DRAINING`,
			`Warning: Importing the shard count of stream prefix "preparing" while a migration is PREPARING .*set shard_count = 4 and apply`,
			`Warning: Importing the shard count of stream prefix "active" while a scale-out waits for a consumer`)
	}
	audited := len(c.AuditEvents())
	if code := runCLI(ctx, t, tf, "apply", "-input=false", "import.tfplan"); code != 0 {
		t.Fatalf("terraform apply of the import plan exited %d", code)
	}
	if events := c.AuditEvents(); len(events) != audited {
		t.Errorf("applying the import plan sent %d audited mutation(s), want none: first is %s %s", len(events)-audited, events[audited].Action, events[audited].Path)
	}
	// A plan never calls an unfinished resharding done: the next plan waits
	// for the DRAINING migration the import recorded, and a split prefix is
	// drift: the imported shard count of "split" plans its repair (issue 30
	// §1). A prefix stuck PREPARING at its own count plans nothing: its
	// groups have the count.
	if code := runCLI(ctx, t, tf, "plan", "-input=false", "-detailed-exitcode", "-out=wait.tfplan"); code != 2 {
		t.Errorf("the plan after importing a DRAINING migration and a split prefix exited %d, want 2 (an update that waits for it, one that repairs the split)", code)
	}
	checkOnlyUpdates(ctx, t, tf, "wait.tfplan", `redisstreamcoordinator_group_shard_count\.\S+`, "draining/svc", "split/a")
	// ...and once the migration has completed, only the split remains.
	c.SetUndrainedShard("draining", "svc", 3, false)
	waitForMigrationDone(t, a, "draining", "svc")
	if code := runCLI(ctx, t, tf, "plan", "-input=false", "-detailed-exitcode", "-out=split.tfplan"); code != 2 {
		t.Errorf("the plan after the migration completed exited %d, want 2 (the split prefix's repair)", code)
	}
	checkOnlyUpdates(ctx, t, tf, "split.tfplan", `redisstreamcoordinator_group_shard_count\.\S+`, "split/a")
	for _, ep := range fixture {
		for _, g := range ep.groups {
			if grp, err := a.group(t, ep.prefix, g); err != nil {
				t.Errorf("%s/%s after the import: %v", ep.prefix, g, err)
			} else if ep.prefix == "split" && grp.ShardCount != map[string]int32{"a": 2, "b": 1}[g] {
				t.Errorf("%s/%s has %d shards after the import", ep.prefix, g, grp.ShardCount)
			}
		}
	}
}

// checkOnlyUpdates reads a saved plan: it must update exactly one resource
// for each of ids, of the type addrPattern matches, and nothing else.
func checkOnlyUpdates(ctx context.Context, t *testing.T, tf *demo.Terraform, planFile, addrPattern string, ids ...string) {
	t.Helper()
	planJSON, err := tf.Output(ctx, "show", "-json", planFile)
	if err != nil {
		t.Fatal(err)
	}
	var plan tfjson.Plan
	if err := json.Unmarshal(planJSON, &plan); err != nil {
		t.Fatalf("decode plan: %v", err)
	}
	re := regexp.MustCompile("^" + addrPattern + "$")
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var changed []string
	for _, rc := range plan.ResourceChanges {
		if rc.Change.Actions.NoOp() {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)
		id, _ := before["id"].(string)
		changed = append(changed, fmt.Sprintf("%s (%v, id %v)", rc.Address, rc.Change.Actions, before["id"]))
		if !rc.Change.Actions.Update() || !re.MatchString(rc.Address) || !want[id] {
			t.Errorf("%s: %v of id %v; want only updates of %q", rc.Address, rc.Change.Actions, before["id"], ids)
		}
	}
	if len(changed) != len(ids) {
		t.Errorf("the plan changes %v; want only the updates of %q", changed, ids)
	}
}

// TestAccGroupList_edgeGroupsMatchImport: for every group of edgeFixture
// (every accepted name, 0 shards, large counts, a split prefix, each
// migration state), each attribute a list result carries is what an import
// followed by a refresh records.
func TestAccGroupList_edgeGroupsMatchImport(t *testing.T) {
	skipUnlessAcc(t)
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds migrations PREPARING and DRAINING and uses fixed names")
	fixture := edgeFixture()
	for _, ep := range fixture {
		for _, g := range ep.groups {
			a.createGroupOutOfBand(t, ep.prefix, g, ep.shards)
		}
		if ep.setup != nil {
			ep.setup(t, a, c, ep.prefix)
		}
	}
	for _, ep := range fixture {
		waitForGroup(t, a, ep.prefix, ep.groups[len(ep.groups)-1], ep.want)
	}
	pp := newProtoProvider(t, a.env)
	for _, ep := range fixture {
		for _, typeName := range []string{"redisstreamcoordinator_group", "redisstreamcoordinator_group_shard_count"} {
			t.Run(ep.prefix+"/"+typeName, func(t *testing.T) {
				pp.t = t
				p := ep.prefix
				results := pp.list(typeName, &p, true, 100)
				for _, r := range results {
					prefix, group, err := parseGroupID(r.DisplayName)
					if err != nil || prefix != p {
						t.Fatalf("result %q: %v", r.DisplayName, err)
					}
					state, _ := pp.importAndRead(typeName, groupID(prefix, group))
					listed, err := r.Resource.Unmarshal(pp.resourceType(typeName))
					if err != nil {
						t.Fatal(err)
					}
					if !listed.Equal(state) {
						diffs, _ := listed.Diff(state)
						t.Errorf("%s: the listed resource differs from the imported and refreshed one: %v", r.DisplayName, diffs)
					}
				}
				if want := map[bool]int{true: len(ep.groups), false: 1}[typeName == "redisstreamcoordinator_group"]; len(results) != want {
					t.Errorf("%d results, want %d", len(results), want)
				}
			})
		}
	}
}
