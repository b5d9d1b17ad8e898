package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// campaignRun is one workflow being run: its coordinator, terraform working
// directory, consumers, and what the invariants need to know.
type campaignRun struct {
	t        *testing.T
	seed     uint64
	settings campaignSettings
	cli      campaignCLI
	steps    []campaignStep
	cur      int // index of the running step; -1 during the initial apply
	env      *acctest.Env
	c        *coordinator.Coordinator
	tf       *demo.Terraform
	logPath  string
	all      *strings.Builder // every command and its output
	m        *campaignModel
	// consumers are the healthy fake members per "prefix/group".
	consumers map[string][]*acctest.Consumer
	backups   map[string][]coordinator.GroupBackup // "prefix/group" → oldest first
	ack       map[string]int64                     // resource name → acknowledged_metadata_version
	regressed map[string]bool                      // "prefix/group" → restored or created again out of band
	// deleted: groups deleted out of band and not created again since. Such
	// a group stays in state, planned for re-creation (documented), so
	// state_matches allows it.
	deleted map[string]bool
	// clean: the last apply succeeded and nothing but consumers changed
	// on the coordinator since.
	clean bool
	// lastOut, lastTF, lastStart: the last terraform command's output,
	// workspace and start (revertRefused).
	lastOut         string
	lastTF          *demo.Terraform
	lastStart       time.Time
	unknownProvider int // > 0: the provider block is unknown at plan time
	// splitBase: the prefixes' counts per group before the running step.
	splitBase map[string]map[string]int32
	// second is the second workspace (its own working directory and
	// state), made by its first step; m.Second: prefix → its configuration
	// has its group of that prefix.
	second *demo.Terraform
	failed bool
}

func runCampaignWorkflow(t *testing.T, seed uint64, settings campaignSettings, cli campaignCLI, providerDir string) {
	m, steps := campaignWorkflow(seed, settings, cli)
	env := acctest.New(t, acctest.Options{})
	w := &campaignRun{
		t: t, seed: seed, settings: settings, cli: cli, steps: steps, cur: -1, env: env, c: env.Coordinator,
		all: &strings.Builder{}, m: m, consumers: map[string][]*acctest.Consumer{},
		backups: map[string][]coordinator.GroupBackup{}, ack: map[string]int64{}, regressed: map[string]bool{},
		deleted: map[string]bool{},
	}
	root := t.TempDir()
	w.logPath = filepath.Join(root, "provider.log")
	w.tf = &demo.Terraform{
		Bin: cli.bin, Dir: filepath.Join(root, "work"), CLIConfig: filepath.Join(root, "terraform.rc"), WithoutLogging: true,
		Env: []string{"TF_LOG_PROVIDER=WARN", "TF_LOG_PATH=" + w.logPath},
	}
	if err := demo.WriteCLIConfig(w.tf.CLIConfig, providerDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(w.tf.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Logf("campaign seed %d (deletion_policy %s, wait_for %s): %d steps\n%s", seed, m.Deletion, m.WaitFor, len(steps), w.stepList())
	t.Cleanup(func() {
		if t.Failed() || os.Getenv(envCampaignVerbose) != "" {
			t.Logf("campaign seed %d: terraform commands and output:\n%s", seed, w.all)
		}
	})

	// Consumers start before their groups exist, as in a deployment.
	for _, g := range m.inConfig("") {
		w.join(g.Prefix, g.Name)
	}
	w.writeConfig()
	if code, _ := w.run("apply", "-auto-approve"); code != 0 {
		w.violate("clean_apply_succeeds", "the initial apply of %d groups on two prefixes exited %d", len(m.inConfig("")), code)
		return
	}
	w.afterApply(true)
	for i, s := range steps {
		w.cur = i
		w.exec(s)
		if w.failed {
			return
		}
	}
	w.cur = len(steps)
	if w.clean {
		if code, _ := w.run("plan", "-detailed-exitcode"); code != 0 {
			w.violate("empty_after_apply", "the final plan, after a successful apply and consumer churn only, exited %d (2: changes, 1: failed)", code)
		}
	}
}

func (w *campaignRun) stepList() string {
	var b strings.Builder
	for i, s := range w.steps {
		fmt.Fprintf(&b, "  %2d  %s\n", i+1, s)
	}
	return b.String()
}

// violate reports a broken invariant with everything needed to replay it,
// and ends the workflow (unless the invariant is switched off).
func (w *campaignRun) violate(inv, format string, args ...any) {
	w.t.Helper()
	if w.failed {
		return // the first broken invariant is the report
	}
	if campaignSucceedInvariants[inv] && w.revertRefused() {
		w.clean = false
		return
	}
	where := "the initial apply"
	switch {
	case w.cur >= len(w.steps):
		where = "the final plan"
	case w.cur >= 0:
		where = fmt.Sprintf("step %d (%s)", w.cur+1, w.steps[w.cur])
	}
	msg := fmt.Sprintf("campaign seed %d: invariant %s broken at %s: %s\n  invariant: %s",
		w.seed, inv, where, fmt.Sprintf(format, args...), campaignInvariants[inv])
	if w.settings.off[inv] {
		w.t.Logf("%s\n  (reported only: %s lists it)", msg, envCampaignInvariants)
		return
	}
	replay := fmt.Sprintf("make campaign SEED=%d", w.seed)
	for _, env := range []string{envCampaignSteps, envCampaignWeights, envCampaignInvariants} {
		if v := os.Getenv(env); v != "" {
			replay += fmt.Sprintf(" %s='%s'", env, v)
		}
	}
	// The steps depend on what the CLI can do: replay under the same one.
	replay += fmt.Sprintf(" CAMPAIGN_TERRAFORM=%s", w.cli.bin)
	w.t.Errorf("%s\n  workflow (deletion_policy %s, wait_for %s):\n%s  replay: %s", msg, w.m.Deletion, w.m.WaitFor, w.stepList(), replay)
	w.failed = true
}

// run runs one terraform command in the working directory; it checks the
// output for no_crash and error_names_request.
func (w *campaignRun) run(args ...string) (int, string) {
	return w.runIn(w.tf, args...)
}

// campaignSucceedInvariants want a command to succeed; violate excuses
// the revert refusal (revertRefused) for them.
var campaignSucceedInvariants = map[string]bool{"clean_apply_succeeds": true, "lost_answer_settles": true, "interrupted_apply_resumes": true}

func (w *campaignRun) runIn(tf *demo.Terraform, args ...string) (int, string) {
	w.t.Helper()
	var out strings.Builder
	tf.Stdout, tf.Stderr = &out, &out
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Flags go right after the command, before any positional argument.
	full := []string{args[0]}
	switch args[0] {
	case "plan", "apply":
		full = append(full, "-no-color", "-input=false")
	case "query":
		full = append(full, "-no-color")
	}
	full = append(full, args[1:]...)
	w.lastOut, w.lastTF, w.lastStart = "", tf, time.Now()
	n := w.audited()
	code, err := tf.Run(ctx, full...)
	if err != nil {
		w.t.Fatalf("campaign seed %d: terraform %s: %v", w.seed, strings.Join(args, " "), err)
	}
	w.lastOut = out.String()
	w.record(args, code, out.String())
	if args[0] == "apply" {
		for _, v := range destroyedThenRefused(w.terraformEvents(n), code, out.String(), w.leftDeleted) {
			w.violate("no_destroy_then_refuse", "terraform %s sent %s", strings.Join(args, " "), v)
		}
	}
	return code, out.String()
}

// leftDeleted reports a group of the configuration that the coordinator
// does not have.
func (w *campaignRun) leftDeleted(p, g string) bool {
	for _, cg := range w.m.inConfig(p) {
		if cg.Name == g {
			_, err := w.getGroup(p, g)
			return client.IsNotFound(err)
		}
	}
	return false
}

func (w *campaignRun) record(args []string, code int, out string) {
	fmt.Fprintf(w.all, "\n$ terraform %s   (step %d, exit %d)\n%s", strings.Join(args, " "), w.cur+1, code, out)
	crash, unnamed := outputViolations(out)
	if crash != "" {
		w.violate("no_crash", "terraform %s printed %q (exit %d)", strings.Join(args, " "), crash, code)
	}
	for _, u := range unnamed {
		w.violate("error_names_request", "terraform %s: %s", strings.Join(args, " "), u)
	}
}

// writeConfig writes the model's configuration to main.tf.
func (w *campaignRun) writeConfig() {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.tf.Dir, "main.tf"), []byte(w.config()), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

func (w *campaignRun) config() string {
	var b strings.Builder
	if w.unknownProvider > 0 {
		a := &accTest{env: w.env}
		b.WriteString(strings.Replace(a.providerConfigUnknownAtPlan(), `input = `,
			fmt.Sprintf("triggers_replace = %d\n  input = ", w.unknownProvider), 1))
	} else {
		b.WriteString(w.env.ProviderConfig())
	}
	for _, p := range campaignPrefixes {
		groups := w.m.inConfig(p)
		var deps []string
		for _, g := range groups {
			extra := []string{fmt.Sprintf("deletion_policy = %q", w.m.Deletion)}
			if w.m.Deletion == "DELETE" {
				extra = append(extra, "force_delete = true")
			}
			if g.Initial > 0 {
				extra = append(extra, fmt.Sprintf("initial_shard_count = %d", g.Initial))
			}
			if v, ok := w.ack[g.Addr]; ok {
				extra = append(extra, fmt.Sprintf("acknowledged_metadata_version = %d", v))
			}
			b.WriteString(groupHCL(g.Addr, g.Prefix, g.Name, extra...))
			deps = append(deps, "redisstreamcoordinator_group."+g.Addr)
		}
		if len(groups) == 0 {
			continue
		}
		extra := []string{fmt.Sprintf("wait_for = %q", w.m.WaitFor), "timeouts {\n    create = \"20s\"\n    update = \"20s\"\n  }",
			"depends_on = [" + strings.Join(deps, ", ") + "]"}
		if v, ok := w.ack[scAddr(p)]; ok {
			extra = append(extra, fmt.Sprintf("acknowledged_metadata_version = %d", v))
		}
		b.WriteString(shardCountHCL(scAddr(p), p, groups[0].Name, w.m.Counts[p], extra...))
	}
	return b.String()
}

func scAddr(prefix string) string { return strings.ReplaceAll(prefix, "-", "_") + "_count" }

// state is terraform's state: resource address → attribute values.
func (w *campaignRun) state() map[string]map[string]any {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := w.tf.Output(ctx, "show", "-json")
	if err != nil {
		w.t.Fatalf("campaign seed %d: %v", w.seed, err)
	}
	var st tfjson.State
	if err := json.Unmarshal(out, &st); err != nil {
		w.t.Fatalf("terraform show -json: %v", err)
	}
	res := map[string]map[string]any{}
	if st.Values != nil && st.Values.RootModule != nil {
		for _, r := range st.Values.RootModule.Resources {
			res[r.Address] = r.AttributeValues
		}
	}
	return res
}

func (w *campaignRun) showPlan(tf *demo.Terraform, file string) *tfjson.Plan {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := tf.Output(ctx, "show", "-json", file)
	if err != nil {
		w.t.Fatalf("campaign seed %d: %v", w.seed, err)
	}
	var plan tfjson.Plan
	if err := json.Unmarshal(out, &plan); err != nil {
		w.t.Fatalf("terraform show -json %s: %v", file, err)
	}
	return &plan
}

// afterApply records a successful apply: state_matches,
// prefix_at_count_after_apply, and a backup of every group for a later
// restore.
func (w *campaignRun) afterApply(cleanNow bool) {
	w.clean = cleanNow
	w.checkStateMatches()
	w.checkStateAgreesWithDiagnostics()
	w.checkPrefixesAtCount()
	for _, g := range w.m.Groups {
		if b, ok := w.c.BackupGroup(g.Prefix, g.Name); ok {
			k := g.Prefix + "/" + g.Name
			w.backups[k] = append(w.backups[k], b)
		}
	}
}

// campaignWaitsForConsumer is the warning of an apply that left a scale-out
// waiting for a consumer, with the prefix its detail names (after the
// resource's address and source lines; terraform wraps the detail, with its
// box-drawing margin, anywhere between words).
var campaignWaitsForConsumer = regexp.MustCompile(`(?s)Warning: Scale-out of group "[^"]+" waits for a consumer.{0,800}?under[\s│]+stream[\s│]+prefix[\s│]+"([^"]+)"`)

// checkStateAgreesWithDiagnostics: the state a successful apply of the
// main workspace leaves never contradicts that apply's own diagnostics
// (issue 43.7): a scale-out it warned waits for a consumer is not recorded
// as completing by itself, and a preview that does not complete by itself
// says what it waits for.
func (w *campaignRun) checkStateAgreesWithDiagnostics() {
	if w.lastTF != w.tf {
		return
	}
	waiting := map[string]bool{}
	for _, m := range campaignWaitsForConsumer.FindAllStringSubmatch(w.lastOut, -1) {
		waiting[m[1]] = true
	}
	for addr, attrs := range w.state() {
		if !strings.HasPrefix(addr, "redisstreamcoordinator_group_shard_count.") {
			continue
		}
		p := fmt.Sprint(attrs["stream_prefix"])
		resharding, _ := attrs["resharding"].(map[string]any)
		if resharding == nil {
			continue
		}
		completes, known := resharding["completes_by_itself"].(bool)
		switch {
		case known && completes && waiting[p]:
			w.violate("state_agrees_with_diagnostics", "the apply warned that a scale-out of stream prefix %s waits for a consumer, and state records %s with resharding.completes_by_itself = true", p, addr)
		case known && !completes && resharding["blocked_by"] == nil:
			w.violate("state_agrees_with_diagnostics", "state records %s with resharding.completes_by_itself = false and no blocked_by", addr)
		}
	}
}

// checkStateMatches: every group in state exists on the coordinator, and
// every shard count in state is the coordinator's.
func (w *campaignRun) checkStateMatches() {
	st := w.state()
	addrs := make([]string, 0, len(st))
	for a := range st {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	for _, addr := range addrs {
		attrs := st[addr]
		typ, _, _ := strings.Cut(addr, ".")
		if typ != "redisstreamcoordinator_group" && typ != "redisstreamcoordinator_group_shard_count" {
			continue
		}
		p, g := fmt.Sprint(attrs["stream_prefix"]), fmt.Sprint(attrs["consumer_group"])
		grp, err := w.getGroup(p, g)
		if err == nil {
			delete(w.deleted, p+"/"+g)
		}
		if err != nil && w.deleted[p+"/"+g] && client.IsNotFound(err) {
			continue
		}
		if err != nil {
			w.violate("state_matches", "state holds %s (%s/%s) but the coordinator answers %v", addr, p, g, err)
			return
		}
		if n, ok := attrs["shard_count"].(float64); ok && typ == "redisstreamcoordinator_group_shard_count" && int32(n) != grp.ShardCount {
			w.violate("state_matches", "state says %s has %d shards, the coordinator %d", addr, int(n), grp.ShardCount)
			return
		}
	}
}

func (w *campaignRun) getGroup(p, g string) (*client.Group, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return w.env.Client().GetGroup(ctx, p, g)
}

// terraformEvents are the audit events from index n on that terraform sent
// (not this test's out-of-band client).
func (w *campaignRun) terraformEvents(n int) []coordinator.AuditEvent {
	var out []coordinator.AuditEvent
	events := w.c.AuditEvents()
	for _, e := range events[min(n, len(events)):] {
		if deref(e.RequestedBy) != outOfBandMutation().RequestedBy && deref(e.RequestedBy) != "tfacc-out-of-band" {
			out = append(out, e)
		}
	}
	return out
}

// campaignRevertRefusal is the provider's plan-time refusal to set a
// prefix's count back to where migrations under way started
// (rollback_on_revert unset, or one of them not ACTIVE);
// campaignRefusedMigration, each migration it names; campaignErrorTitle,
// every error of the output.
var (
	campaignRevertRefusal    = regexp.MustCompile(`Stream\s+prefix\s+"([^"]+)"\s+is\s+being\s+resharded\s+away\s+from\s+(\d+)\s+shards`)
	campaignRefusedMigration = regexp.MustCompile(`group\s+"([^"]+)":\s+migration\s+(\S+),\s+(\d+)→(\d+)\s+shards`)
	campaignErrorTitle       = regexp.MustCompile(`(?m)^\s*Error: (.*)$`)
)

// revertRefused reports whether the last terraform command of the
// workspace failed with the revert refusal at plan time, nothing else, and
// rightly: every error is the refusal of the prefix whose configured count
// it refuses, nothing was sent, and by the coordinator's record a
// migration the refusal names started at that count and was under way when
// the command ran (it may have finished since). The provider documents the
// refusal (rollback_on_revert), so the invariants that want a command to
// succeed excuse it, and nothing else; never at apply time, where a clean
// run's plan would have refused it already. The migration may belong to a
// group the configuration no longer has: one an ABANDON removal left, which
// the stream scale rescaled with the rest (seed 193420018).
func (w *campaignRun) revertRefused() bool {
	if w.lastTF != w.tf {
		return false
	}
	m := campaignRevertRefusal.FindStringSubmatch(w.lastOut)
	if m == nil || !strings.Contains(w.lastOut, "Nothing was sent to the coordinator.") {
		return false
	}
	p := m[1]
	n, err := strconv.Atoi(m[2])
	if err != nil || w.m.Counts[p] != n {
		return false
	}
	title := fmt.Sprintf("Stream prefix %q is being resharded away from %d shards", p, n)
	for _, e := range campaignErrorTitle.FindAllStringSubmatch(w.lastOut, -1) {
		if strings.TrimSpace(e[1]) != title {
			return false
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, mm := range campaignRefusedMigration.FindAllStringSubmatch(w.lastOut, -1) {
		mig, err := w.env.Client().GetMigration(ctx, p, mm[1], mm[2])
		if err != nil || int(mig.FromShardCount) != n {
			continue
		}
		// Server timestamps may be truncated; a second's slack.
		if mig.Finished() && mig.UpdatedAt.Before(w.lastStart.Add(-time.Second)) {
			continue
		}
		w.t.Logf("campaign seed %d: step %d: the provider refused to set %s back to %d shards while migration %s of group %q, %d→%d, was under way: documented (rollback_on_revert), not a violation",
			w.seed, w.cur+1, p, n, mig.ReshardingID, mm[1], mig.FromShardCount, mig.ToShardCount)
		return true
	}
	return false
}

func (w *campaignRun) audited() int { return len(w.c.AuditEvents()) }

// mustSucceed: the last apply succeeded, nothing changed out of band since,
// and every group has a healthy consumer (without one a scale-out stays
// ACTIVE, and the provider rightly refuses a scale that would wait for it):
// the configuration's groups, and the groups an ABANDON removal left on the
// coordinator, which a stream scale rescales too (seed 503407483).
func (w *campaignRun) mustSucceed() bool {
	if !w.clean {
		return false
	}
	for _, g := range w.m.inConfig("") {
		if len(w.consumers[g.Prefix+"/"+g.Name]) == 0 {
			return false
		}
	}
	return !w.stuckScaleOut()
}

// stuckScaleOut reports a group of a campaign prefix, in the configuration
// or not, with a scale-out under way and no live consumer: it stays ACTIVE,
// and every scale of its prefix is refused until a consumer joins. A group
// with no consumer the campaign keeps running counts as one even while a
// member that fell silent (a joiner of joinAtGET, a stalled or expired
// consumer) still has its lease: that lease runs out within seconds, during
// the next apply's wait at the latest (seed 772216357).
func (w *campaignRun) stuckScaleOut() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, err := w.env.Client().Groups(ctx)
	if err != nil {
		return true // unknown: do not require success
	}
	for _, g := range groups {
		am := g.ActiveMigration
		noConsumer := g.State == client.GroupEmpty || len(w.consumers[g.StreamPrefix+"/"+g.ConsumerGroup]) == 0
		if slices.Contains(campaignPrefixes, g.StreamPrefix) && !am.Finished() && am.ToShardCount > am.FromShardCount && noConsumer {
			return true
		}
	}
	return false
}
