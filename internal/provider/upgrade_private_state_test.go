package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// A workspace applied with an earlier build plans empty with this one, its
// private state included (issue 30). Each fixture in upgradeFixtureDirs was
// written by the provider of the commit it names under Terraform 1.11.4
// (TestAccUpgradePrivateState_writeFixture, see its README): 122574b, before
// issue 30, and 75546cf, the last build that kept one private-state key per
// fact (siblings_seen in its version 2), before the one versioned record
// (private_record.go). Each holds the state
// with every instance's private state, the configuration, and the
// coordinator's store as the state recorded it (coordinator.SaveGroups), so
// the restored groups report the metadataVersions, epochs and migration ids
// the private state holds. The test loads that store into a fresh in-repo
// coordinator, copies the state into a fresh working directory and runs the
// current build on it under the Terraform or OpenTofu under test.

const (
	// envWriteUpgradeFixture = <commit> makes
	// TestAccUpgradePrivateState_writeFixture write the fixture into
	// testdata/upgrade-<commit> of the tree it runs in.
	envWriteUpgradeFixture = "TF_ACC_WRITE_UPGRADE_FIXTURE"
	// upgradedPrivateKey is the one key this build keeps in private state
	// (privateRecordKey; spelled out, so this file also builds in the
	// worktree of an older commit that writes a fixture).
	upgradedPrivateKey   = "record"
	upgradeStateFile     = "state-terraform-1.11.4.json" // not *.tfstate: .gitignore
	upgradeStoreFile     = "coordinator-store.json"
	upgradeWorkspaceFile = "workspace.tf"
)

// upgradeFixtureDirs are the committed fixtures, oldest first.
var upgradeFixtureDirs = []string{"testdata/upgrade-122574b", "testdata/upgrade-75546cf", "testdata/upgrade-ab9e17d"}

// upgradeGroups is the workspace before its shard counts and imports: two
// groups of one prefix, created with an initial count.
const upgradeGroups = `
resource "redisstreamcoordinator_group" "billing" {
  stream_prefix       = "upgrade-orders"
  consumer_group      = "billing"
  initial_shard_count = 6
}

resource "redisstreamcoordinator_group" "shipping" {
  stream_prefix       = "upgrade-orders"
  consumer_group      = "shipping"
  initial_shard_count = 6
}
`

// upgradeWorkspace is the fixture's configuration: upgradeGroups, a shard
// count that scaled their prefix in (a stream-level scale of both groups,
// completed without consumers), and a group of another prefix created out
// of band and imported with its shard count.
const upgradeWorkspace = upgradeGroups + `
resource "redisstreamcoordinator_group_shard_count" "orders" {
  stream_prefix  = redisstreamcoordinator_group.billing.stream_prefix
  consumer_group = redisstreamcoordinator_group.billing.consumer_group
  shard_count    = 3
  reason         = "fewer shards after the sale"
}

import {
  to = redisstreamcoordinator_group.audit
  id = "upgrade-events/audit"
}

resource "redisstreamcoordinator_group" "audit" {
  stream_prefix  = "upgrade-events"
  consumer_group = "audit"
}

import {
  to = redisstreamcoordinator_group_shard_count.events
  id = "upgrade-events/audit"
}

resource "redisstreamcoordinator_group_shard_count" "events" {
  stream_prefix  = redisstreamcoordinator_group.audit.stream_prefix
  consumer_group = redisstreamcoordinator_group.audit.consumer_group
  shard_count    = 4
}
`

// upgradeRun is one terraform working directory of these tests.
type upgradeRun struct {
	t     *testing.T
	ctx   context.Context
	env   *acctest.Env
	coord *coordinator.Coordinator
	tf    *demo.Terraform
	all   *strings.Builder // every command's output, logged on failure
}

// newUpgradeRun starts an in-repo coordinator and a working directory whose
// terraform runs the provider in providerDir.
func newUpgradeRun(t *testing.T, tfBin, providerDir string) *upgradeRun {
	t.Helper()
	env := acctest.New(t, acctest.Options{})
	c := env.RequireInRepo(t, "the fixture's state names fixed groups and migration ids, which only a restored store holds")
	root := t.TempDir()
	r := &upgradeRun{t: t, env: env, coord: c, all: &strings.Builder{},
		tf: &demo.Terraform{Bin: tfBin, Dir: filepath.Join(root, "work"), CLIConfig: filepath.Join(root, "terraform.rc"), WithoutLogging: true}}
	if err := demo.WriteCLIConfig(r.tf.CLIConfig, providerDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(r.tf.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	r.ctx = ctx
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("terraform output:\n%s", r.all)
		}
	})
	return r
}

func (r *upgradeRun) write(name, text string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.tf.Dir, name), []byte(text), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

// run runs one terraform command and returns its exit code and output.
func (r *upgradeRun) run(args ...string) (int, string) {
	r.t.Helper()
	out := &strings.Builder{}
	r.tf.Stdout, r.tf.Stderr = out, out
	code := runCLI(r.ctx, r.t, r.tf, args...)
	fmt.Fprintf(r.all, "$ terraform %s (exit %d)\n%s\n", strings.Join(args, " "), code, out)
	return code, out.String()
}

// mustRun runs a command that must exit 0 with no diagnostics but the
// development-override warning.
func (r *upgradeRun) mustRun(args ...string) {
	r.t.Helper()
	code, out := r.run(args...)
	if code != 0 {
		r.t.Fatalf("terraform %s exited %d, want 0", strings.Join(args, " "), code)
	}
	if d := unexpectedDiagnostics(out); len(d) > 0 {
		r.t.Fatalf("terraform %s printed diagnostics: %s", strings.Join(args, " "), strings.Join(d, "; "))
	}
	// Every dev_overrides run warns so: without it, diagnosticTitle no
	// longer matches what the CLI prints, and the check above sees nothing.
	if !strings.Contains(out, "Warning: Provider development overrides are in effect") {
		r.t.Fatalf("terraform %s printed no development-override warning: the diagnostics check no longer reads its output", strings.Join(args, " "))
	}
}

// diagnosticTitle matches the first line of a diagnostic as terraform and
// tofu print it with -no-color ("│ Warning: title", or "Error: title").
var diagnosticTitle = regexp.MustCompile(`(?m)^(?:│ )?(Warning|Error): (.+)$`)

// unexpectedDiagnostics are the warnings and errors in out other than the
// one every dev_overrides run prints.
func unexpectedDiagnostics(out string) []string {
	var found []string
	for _, m := range diagnosticTitle.FindAllStringSubmatch(out, -1) {
		if m[1] == "Warning" && strings.Contains(m[2], "development overrides are in effect") {
			continue
		}
		found = append(found, m[1]+": "+strings.TrimSpace(m[2]))
	}
	return found
}

// upgradeFixture is the committed fixture.
type upgradeFixture struct {
	name      string // its directory's name: upgrade-<commit>
	state     []byte // the state file as Terraform 1.11.4 wrote it
	store     []byte // coordinator.SaveGroups
	workspace string // the configuration, without provider block
}

func readUpgradeFixture(t *testing.T, dir string) upgradeFixture {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("the upgrade fixture: %v (regenerate it as %s/README.md says)", err, dir)
		}
		return b
	}
	return upgradeFixture{name: filepath.Base(dir), state: read(upgradeStateFile), store: read(upgradeStoreFile), workspace: string(read(upgradeWorkspaceFile))}
}

// restore puts the coordinator back in the fixture's state (with store,
// the fixture's or a changed copy) and the state and configuration into
// the working directory.
func (r *upgradeRun) restore(fx upgradeFixture, store []byte, workspace string) {
	r.t.Helper()
	if err := r.coord.LoadGroups(store); err != nil {
		r.t.Fatal(err)
	}
	r.write("main.tf", r.env.ProviderConfig()+workspace)
	r.write("terraform.tfstate", string(fx.state))
}

// upgradeCLI is the Terraform or OpenTofu under test and the provider as
// this tree builds it.
func upgradeCLI(t *testing.T) (tfBin, providerDir string) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	return tfBin, builtProvider(t)
}

// TestAccUpgradePrivateState runs the current build on each fixture's state.
func TestAccUpgradePrivateState(t *testing.T) {
	t.Parallel() // every subtest has a coordinator and a directory of its own
	tfBin, providerDir := upgradeCLI(t)
	for _, dir := range upgradeFixtureDirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			testUpgradePrivateState(t, tfBin, providerDir, readUpgradeFixture(t, dir))
		})
	}
}

func testUpgradePrivateState(t *testing.T, tfBin, providerDir string, fx upgradeFixture) {

	// The refresh and the plan find nothing to change, and a refresh-only
	// apply records what it read without changing that: nothing is sent
	// to the coordinator.
	t.Run("plans_empty", func(t *testing.T) {
		r := newUpgradeRun(t, tfBin, providerDir)
		r.restore(fx, fx.store, fx.workspace)
		r.mustRun("plan", "-input=false", "-detailed-exitcode")
		r.mustRun("plan", "-input=false", "-refresh=false", "-detailed-exitcode")
		r.mustRun("apply", "-input=false", "-refresh-only", "-auto-approve")
		r.mustRun("plan", "-input=false", "-detailed-exitcode")
		// The refresh saved every instance's private state as the one
		// record: no key of the earlier build is left.
		state, err := os.ReadFile(filepath.Join(r.tf.Dir, "terraform.tfstate"))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range fixtureInstances(t, state) {
			if keys := slices.Sorted(maps.Keys(in.Private)); !slices.Equal(keys, []string{upgradedPrivateKey}) {
				t.Errorf("%s: private state keys %v after the upgraded refresh, want only %q", in.Address, keys, upgradedPrivateKey)
			}
		}
		if events := r.coord.AuditEvents(); len(events) != 0 {
			t.Errorf("the upgraded build sent %d audited mutation(s), want none: first is %s %s", len(events), events[0].Action, events[0].Path)
		}
	})

	// The epochs the old build saw are only in private state (epochs_seen;
	// the state's attributes hold the version alone): a group whose epochs
	// went backwards at the same metadataVersion fails the plan closed only
	// if the new build read them.
	t.Run("epochs_seen_still_guards", func(t *testing.T) {
		r := newUpgradeRun(t, tfBin, providerDir)
		r.restore(fx, lowerEpochs(t, fx.store, "upgrade-orders", "billing"), fx.workspace)
		code, out := r.run("plan", "-input=false", "-detailed-exitcode")
		if code != 1 {
			t.Fatalf("plan exited %d with the epochs of upgrade-orders/billing lowered at the same metadataVersion, want 1 (the metadata guard)", code)
		}
		if !strings.Contains(out, "epochs went backwards") {
			t.Errorf("the plan failed, but not on the epoch regression: %s", strings.Join(unexpectedDiagnostics(out), "; "))
		}
	})

	// A saved plan made without a refresh has the fixture's private state as
	// its basis (group_seen, and siblings_seen when the old build's refresh
	// listed the prefix); a sibling that moved before it is applied makes it
	// stale: refused, nothing scaled.
	t.Run("saved_plan_stale_after_sibling_moved", func(t *testing.T) {
		r := newUpgradeRun(t, tfBin, providerDir)
		const from, to = "  shard_count    = 3\n", "  shard_count    = 2\n"
		if strings.Count(fx.workspace, from) != 1 {
			t.Fatalf("the fixture's workspace no longer sets %q once", strings.TrimSpace(from))
		}
		r.restore(fx, fx.store, strings.Replace(fx.workspace, from, to, 1))
		if code, _ := r.run("plan", "-input=false", "-refresh=false", "-out=scale.tfplan"); code != 0 {
			t.Fatalf("plan -refresh=false of the scale-in exited %d", code)
		}
		if _, err := r.env.Client().ScaleGroup(ctxT(t), "upgrade-orders", "shipping", 5, outOfBandMutation()); err != nil {
			t.Fatalf("out-of-band scale of the sibling: %v", err)
		}
		code, out := r.run("apply", "-input=false", "scale.tfplan")
		if code == 0 {
			t.Fatal("the saved plan was applied after a sibling moved; want it refused as stale")
		}
		if !strings.Contains(out, "Stale plan") {
			t.Errorf("the apply failed, but not as a stale plan: %s", strings.Join(unexpectedDiagnostics(out), "; "))
		}
		if events := terraformMutations(r.coord, "upgrade-orders", "SCALE_STREAM", "SCALE_GROUP"); len(events) != 0 {
			t.Errorf("the refused apply scaled: %+v", events)
		}
		grp, err := r.env.Client().GetGroup(ctxT(t), "upgrade-orders", "billing")
		if err != nil || grp.ShardCount != 3 {
			t.Errorf("billing must keep 3 shards after the refused apply: %+v, %v", grp, err)
		}
	})

	// An earlier build's counts-only record does not know the siblings'
	// migrations (prefix.Record.CountsOnly): a sibling whose migration was
	// under way at that build's refresh, at the count the record holds, is
	// no change, so a plan without a refresh is not refused as stale.
	if fx.name == countsOnlyFixture {
		t.Run("counts_only_record_beside_a_sibling_under_way", func(t *testing.T) {
			r := newUpgradeRun(t, tfBin, providerDir)
			const from, to = "  shard_count    = 3\n", "  shard_count    = 2\n"
			// shipping at 1, scaled out to the recorded 3 with no consumer:
			// its migration stays ACTIVE, at 3 shards.
			r.restore(fx, withShardCount(t, fx.store, "upgrade-orders", "shipping", 1), strings.Replace(fx.workspace, from, to, 1))
			if _, err := r.env.Client().ScaleGroup(ctxT(t), "upgrade-orders", "shipping", 3, outOfBandMutation()); err != nil {
				t.Fatalf("out-of-band scale of the sibling: %v", err)
			}
			code, out := r.run("plan", "-input=false", "-refresh=false")
			if strings.Contains(out, "Stale plan") {
				t.Fatalf("plan -refresh=false refused as stale on a counts-only record whose counts still hold (exit %d): %s", code, out)
			}
			// What does stand in the way is named: the sibling's scale-out,
			// which has no consumer to finish it.
			if code != 1 || !strings.Contains(out, `must wait for migration`) || !strings.Contains(out, `of group "shipping" (1→3 shards,`) {
				t.Fatalf("plan -refresh=false exited %d; want it refused on shipping's scale-out with no consumer: %s", code, out)
			}
		})
	}
}

// countsOnlyFixture is the fixture whose build kept the prefix as counts
// only (siblings_seen version 1, no migrations).
const countsOnlyFixture = "upgrade-122574b"

// withShardCount is the store fixture with group {p, g} at count shards.
func withShardCount(t *testing.T, store []byte, p, g string, count int) []byte {
	return editStoreGroup(t, store, p, g, func(m map[string]any) { m["shardCount"] = count })
}

// lowerEpochs is the store fixture with group {p, g}'s groupEpoch and
// assignmentEpoch one lower and its metadataVersion kept: a corrupted copy
// (coordinator.GroupBackup.WithMetadataVersion's counterpart).
func lowerEpochs(t *testing.T, store []byte, p, g string) []byte {
	return editStoreGroup(t, store, p, g, func(m map[string]any) {
		for _, k := range []string{"groupEpoch", "assignmentEpoch"} {
			v, _ := m[k].(float64)
			if v < 2 {
				t.Fatalf("the fixture's %s/%s has %s %v: too low to lower", p, g, k, m[k])
			}
			m[k] = v - 1
		}
	})
}

// editStoreGroup is the store fixture (coordinator.SaveGroups) with group
// {p, g}'s JSON object changed by edit.
func editStoreGroup(t *testing.T, store []byte, p, g string, edit func(m map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(store, &doc); err != nil {
		t.Fatal(err)
	}
	groups, _ := doc["groups"].([]any)
	for _, gi := range groups {
		if m, _ := gi.(map[string]any); m["streamPrefix"] == p && m["consumerGroup"] == g {
			edit(m)
			b, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("the store fixture has no group %s/%s", p, g)
	return nil
}

// fixtureInstance is one resource instance of the fixture's state with its
// private state decoded: the framework's JSON object of keys to bytes.
type fixtureInstance struct {
	Address    string
	Attributes map[string]any
	Private    map[string][]byte
}

func fixtureInstances(t *testing.T, state []byte) []fixtureInstance {
	t.Helper()
	var st struct {
		Resources []struct {
			Mode, Type, Name string
			Instances        []struct {
				Attributes map[string]any `json:"attributes"`
				Private    string         `json:"private"`
			}
		}
	}
	if err := json.Unmarshal(state, &st); err != nil {
		t.Fatal(err)
	}
	var out []fixtureInstance
	for _, res := range st.Resources {
		for _, inst := range res.Instances {
			fi := fixtureInstance{Address: res.Type + "." + res.Name, Attributes: inst.Attributes, Private: map[string][]byte{}}
			if inst.Private != "" {
				raw, err := base64.StdEncoding.DecodeString(inst.Private)
				if err != nil {
					t.Fatalf("%s: private state is not base64: %v", fi.Address, err)
				}
				if err := json.Unmarshal(raw, &fi.Private); err != nil {
					t.Fatalf("%s: private state %q is not the framework's JSON object: %v", fi.Address, raw, err)
				}
			}
			out = append(out, fi)
		}
	}
	return out
}

// TestUpgradeFixtureIsConsistent checks the committed fixture itself, so a
// regenerated one that lost what the acceptance test relies on fails here,
// without terraform: every instance has private state; the shard counts'
// record the group read (group_seen) and its epochs at the metadataVersion
// the restored store reports, and the scaled one its migrations.
func TestUpgradeFixtureIsConsistent(t *testing.T) {
	for _, dir := range upgradeFixtureDirs {
		t.Run(filepath.Base(dir), func(t *testing.T) { testUpgradeFixtureIsConsistent(t, readUpgradeFixture(t, dir)) })
	}
}

func testUpgradeFixtureIsConsistent(t *testing.T, fx upgradeFixture) {
	var store struct {
		Groups []struct {
			StreamPrefix, ConsumerGroup string
			GroupEpoch, AssignmentEpoch int64
			MetadataVersion             int64
			ShardCount                  int
			ActiveReshardingID          string
			Migrations                  []struct{ ReshardingID, State string }
		}
	}
	if err := json.Unmarshal(fx.store, &store); err != nil {
		t.Fatal(err)
	}
	type key struct{ p, g string }
	mv := map[key]int64{}
	epochs := map[key][2]int64{}
	migrations := map[string]string{}
	for _, g := range store.Groups {
		if g.ActiveReshardingID != "" {
			t.Errorf("store fixture: %s/%s has a migration under way; the fixture is a settled workspace", g.StreamPrefix, g.ConsumerGroup)
		}
		mv[key{g.StreamPrefix, g.ConsumerGroup}] = g.MetadataVersion
		epochs[key{g.StreamPrefix, g.ConsumerGroup}] = [2]int64{g.GroupEpoch, g.AssignmentEpoch}
		for _, m := range g.Migrations {
			migrations[m.ReshardingID] = m.State
		}
	}
	var addresses []string
	for _, in := range fixtureInstances(t, fx.state) {
		addresses = append(addresses, in.Address)
		k := key{fmt.Sprint(in.Attributes["stream_prefix"]), fmt.Sprint(in.Attributes["consumer_group"])}
		if len(in.Private) == 0 {
			t.Errorf("%s has no private state", in.Address)
			continue
		}
		if record, ok := in.Private[upgradedPrivateKey]; ok {
			// A build with the one record: its fields under the keys of
			// the builds before it (prefix_seen was siblings_seen).
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(record, &fields); err != nil {
				t.Fatalf("%s: record %q: %v", in.Address, record, err)
			}
			fields["siblings_seen"] = fields["prefix_seen"]
			for name, v := range fields {
				in.Private[name] = v
			}
		}
		var mark struct {
			MetadataVersion int64 `json:"metadata_version"`
			GroupEpoch      int64 `json:"group_epoch"`
			AssignmentEpoch int64 `json:"assignment_epoch"`
		}
		if err := json.Unmarshal(in.Private["epochs_seen"], &mark); err != nil {
			t.Errorf("%s: epochs_seen %q: %v", in.Address, in.Private["epochs_seen"], err)
		} else if mark.MetadataVersion != mv[k] || [2]int64{mark.GroupEpoch, mark.AssignmentEpoch} != epochs[k] {
			t.Errorf("%s: epochs_seen %+v, the store reports metadataVersion %d and epochs %v", in.Address, mark, mv[k], epochs[k])
		}
		if !strings.HasPrefix(in.Address, "redisstreamcoordinator_group_shard_count.") {
			var highest struct {
				MetadataVersion int64 `json:"metadata_version"`
			}
			if err := json.Unmarshal(in.Private["group_highest_seen"], &highest); err != nil || highest.MetadataVersion != mv[k] {
				t.Errorf("%s: group_highest_seen %q, want metadataVersion %d (%v)", in.Address, in.Private["group_highest_seen"], mv[k], err)
			}
			continue
		}
		if got, ok := in.Attributes["metadata_version"].(float64); !ok || int64(got) != mv[k] {
			t.Errorf("%s: metadata_version %v in state, the store reports %d", in.Address, in.Attributes["metadata_version"], mv[k])
		}
		// Version 1 (122574b) is a map of counts, version 2 {"v":2,"groups":…}.
		var siblings map[string]any
		if err := json.Unmarshal(in.Private["siblings_seen"], &siblings); err != nil || len(siblings) == 0 {
			t.Errorf("%s: siblings_seen %q, want the prefix's groups as the refresh listed them (%v)", in.Address, in.Private["siblings_seen"], err)
		}
		var seen struct{ MetadataVersion int64 }
		if err := json.Unmarshal(in.Private["group_seen"], &seen); err != nil || seen.MetadataVersion != mv[k] {
			t.Errorf("%s: group_seen %q, want the group at metadataVersion %d (%v)", in.Address, in.Private["group_seen"], mv[k], err)
		}
		ids, _ := in.Attributes["migration_ids"].(map[string]any)
		for g, id := range ids {
			if migrations[fmt.Sprint(id)] != coordinator.MigrationDeprecated {
				t.Errorf("%s: migration_ids[%s] = %v, which the store holds as %q, want DEPRECATED", in.Address, g, id, migrations[fmt.Sprint(id)])
			}
		}
	}
	slices.Sort(addresses)
	want := []string{
		"redisstreamcoordinator_group.audit", "redisstreamcoordinator_group.billing", "redisstreamcoordinator_group.shipping",
		"redisstreamcoordinator_group_shard_count.events", "redisstreamcoordinator_group_shard_count.orders",
	}
	if !slices.Equal(addresses, want) {
		t.Errorf("the fixture's state holds %v, want %v", addresses, want)
	}
}

// TestAccUpgradePrivateState_writeFixture writes the fixture. Run it, with
// TF_ACC=1 and TF_ACC_WRITE_UPGRADE_FIXTURE=<commit>, in a worktree of the commit
// whose provider should write it, with Terraform 1.11.4 as terraform on
// PATH; see the fixture's README.
func TestAccUpgradePrivateState_writeFixture(t *testing.T) {
	commit := os.Getenv(envWriteUpgradeFixture)
	if commit == "" {
		t.Skipf("writes the upgrade fixture only with %s=<commit>", envWriteUpgradeFixture)
	}
	upgradeFixtureDir := "testdata/upgrade-" + commit
	if v := os.Getenv(acctest.EnvNumbering); v != "" {
		t.Fatalf("unset %s: the fixture is written with the real server's numbering", acctest.EnvNumbering)
	}
	tfBin, providerDir := upgradeCLI(t)
	if v := cliVersion(t, tfBin); v != "1.11.4" {
		t.Fatalf("the fixture is written by Terraform 1.11.4, the oldest supported; %s is %s", tfBin, v)
	}
	r := newUpgradeRun(t, tfBin, providerDir)
	shards := int32(4)
	if _, err := r.env.Client().CreateGroup(ctxT(t), "upgrade-events", "audit", &shards, outOfBandMutation()); err != nil {
		t.Fatal(err)
	}
	r.write("main.tf", r.env.ProviderConfig()+upgradeGroups)
	r.mustRunOld("apply", "-input=false", "-auto-approve")
	r.write("main.tf", r.env.ProviderConfig()+upgradeWorkspace)
	r.mustRunOld("apply", "-input=false", "-auto-approve")
	// One walk at a time, so the refresh reads the groups before the shard
	// counts and lists the coordinator once it has read more than two: the
	// shard counts' refresh records the prefix (siblings_seen).
	r.mustRunOld("apply", "-input=false", "-refresh-only", "-auto-approve", "-parallelism=1")
	if code, _ := r.run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the writing build's own plan is not empty (exit %d)", code)
	}
	store, err := r.coord.SaveGroups()
	if err != nil {
		t.Fatal(err)
	}
	state, err := os.ReadFile(filepath.Join(r.tf.Dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(upgradeFixtureDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{upgradeStateFile: state, upgradeStoreFile: append(store, '\n'),
		upgradeWorkspaceFile: []byte(strings.TrimPrefix(upgradeWorkspace, "\n"))} {
		if err := os.WriteFile(filepath.Join(upgradeFixtureDir, name), b, 0o644); err != nil { //nolint:gosec // committed test data
			t.Fatal(err)
		}
	}
	t.Logf("wrote %s (%d bytes of state)", upgradeFixtureDir, len(bytes.TrimSpace(state)))
}

// mustRunOld is mustRun for the writing build, which may warn (the stream
// scale's note on the prefix's other group).
func (r *upgradeRun) mustRunOld(args ...string) {
	r.t.Helper()
	if code, _ := r.run(args...); code != 0 {
		r.t.Fatalf("terraform %s exited %d", strings.Join(args, " "), code)
	}
}
