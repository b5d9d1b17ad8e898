package provider

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// The campaign's steps that need more than one terraform command, or a
// second working directory.

// interrupt: terraform apply gets SIGINT while a mutation (hold) or the
// read-back of a mutation whose answer was lost (lost_answer) is held in the
// coordinator; the held request is released once the provider logged the
// interrupt. Afterwards nothing new may have been sent.
//
// The apply runs with -parallelism=1, so that when the hold is taken
// nothing else runs: the held GET is the lost mutation's own read-back, and
// no other resource can send a mutation between the SIGINT and the moment
// the provider learns of it (Terraform's StopProvider), which the provider
// cannot refuse and the audit log cannot tell from one sent after it. With
// other resources running beside it, the hold could take another resource's
// GET (a wait's poll of the groups listing), and the lost mutation's
// read-back and re-send, both before the provider knew of the interrupt,
// would look like a send after it (seeds 618826757 and 618826792).
//
// It reports whether the apply was interrupted, with nothing sent after it.
func (w *campaignRun) interrupt(s campaignStep) bool {
	w.clean = false
	route := mutationRoute(s.Change)
	reached := make(chan struct{})
	var once atomic.Bool
	var released atomic.Bool
	reach := func() {
		if once.CompareAndSwap(false, true) {
			close(reached)
		}
	}
	hold := coordinator.Fault{Kind: coordinator.FaultDelay, Delay: 2 * time.Minute, Until: released.Load, OnMatch: reach}
	if s.Fault == "lost_answer" {
		readBack := hold
		readBack.Method = http.MethodGet
		w.c.InjectFault(coordinator.Fault{Method: http.MethodPost, Route: route, Kind: coordinator.FaultResetBeforeApply,
			OnMatch: func() { w.c.InjectFault(readBack) }})
	} else {
		hold.Method, hold.Route = http.MethodPost, route
		w.c.InjectFault(hold)
	}
	defer w.c.ClearFaults()

	logBefore := len(w.providerLog())
	var out strings.Builder
	w.tf.Stdout, w.tf.Stderr = &out, &out
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	proc, err := w.tf.Start(ctx, "apply", "-auto-approve", "-no-color", "-input=false", "-parallelism=1")
	if err != nil {
		w.t.Fatal(err)
	}
	exited := make(chan int, 1)
	go func() { code, _ := proc.Wait(); exited <- code }()
	var code int
	select {
	case code = <-exited:
		w.record([]string{"apply", "-auto-approve", "-parallelism=1", "(no request to hold: not interrupted)"}, code, out.String())
		return false
	case <-reached:
	}
	n := w.audited()
	if err := proc.Signal(os.Interrupt); err != nil {
		w.t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(w.providerLog()[logBefore:], interruptMarker) {
			break
		}
	}
	released.Store(true)
	code = <-exited
	w.record([]string{"apply", "-auto-approve", "-parallelism=1", "(SIGINT while " + s.Fault + " " + route + ")"}, code, out.String())
	sent := w.terraformEvents(n)
	allowed := 0
	if s.Fault == "hold" {
		allowed = 1 // the held mutation itself completes
	}
	if len(sent) > allowed {
		var what []string
		for _, e := range sent {
			what = append(what, fmt.Sprintf("%s %s (request id %s, %d)", e.Action, e.Path, e.RequestID, e.Status))
		}
		w.violate("nothing_after_sigint", "after SIGINT (%s of POST %s) terraform sent %d mutation(s), at most %d was in flight: %s",
			s.Fault, route, len(sent), allowed, strings.Join(what, "; "))
		return false
	}
	return true
}

// resumeInterrupted: the next apply of the configuration an interrupted
// apply left unfinished (nothing out of band before it) finishes it: it
// resumes the unfinished wait, or sends what was not sent. In every other
// such step (by seed and step), the migrations the interrupted apply left
// under way finish before that apply plans, so it resumes a wait whose
// migrations are already done.
func (w *campaignRun) resumeInterrupted() {
	if (w.seed+uint64(w.cur))%2 == 0 {
		w.settleMigrations()
	}
	code, _ := w.run("apply", "-auto-approve")
	if code != 0 {
		w.violate("interrupted_apply_resumes", "terraform apply after the interrupted one exited %d, with only consumer churn since", code)
		return
	}
	if w.m.WaitFor == "COMPLETION" {
		// It finished what it started: every group's migration completed.
		for _, g := range w.m.inConfig("") {
			if cur, err := w.getGroup(g.Prefix, g.Name); err == nil && !cur.ActiveMigration.Finished() {
				w.violate("interrupted_apply_resumes", "terraform apply after the interrupted one (wait_for COMPLETION) succeeded, but group %s/%s still has %s",
					g.Prefix, g.Name, prefix.Describe(cur.ActiveMigration))
				return
			}
		}
	}
	w.afterApply(true)
}

// settleMigrations waits, for at most 20 s, until no group of the campaign
// has a migration under way. Nothing is judged by whether they finished.
func (w *campaignRun) settleMigrations() {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		under := false
		for _, g := range w.m.inConfig("") {
			if cur, err := w.getGroup(g.Prefix, g.Name); err == nil && !cur.ActiveMigration.Finished() {
				under = true
			}
		}
		if !under {
			w.note("the migrations left under way finished")
			return
		}
	}
	w.note("migrations still under way after 20 s")
}

// campaignInvalid is a validator refusing a value.
var campaignInvalid = regexp.MustCompile(`Invalid Attribute Value|Invalid Attribute Combination|must be between`)

// campaignRegression is the metadata guard's error.
var campaignRegression = regexp.MustCompile(`Metadata of group \S+ regressed`)

// campaignRegressionFailsClosed is the metadata guard's plan-time error,
// naming the group ("prefix/group").
var campaignRegressionFailsClosed = regexp.MustCompile(`^Metadata of group (\S+) regressed: the plan fails closed`)

// failedClosedOnRegression reports whether every error of a failed
// command's output is the metadata guard failing the plan closed on a group
// the workflow regressed out of band (restored or created again) and has
// not acknowledged since. The guard decides from the regression recorded in
// state, with no coordinator to ask, so it fails every plan alike, the
// provider configuration known or not: the plan failing is the guard
// working (the runbook's "the plan fails closed until then"), not a plan
// the unknown configuration broke.
func (w *campaignRun) failedClosedOnRegression(out string) bool {
	blocks := errorBlocks(out)
	for _, block := range blocks {
		m := campaignRegressionFailsClosed.FindStringSubmatch(block)
		if m == nil || !w.regressed[m[1]] {
			return false
		}
	}
	return len(blocks) > 0
}

func (w *campaignRun) providerLog() string {
	b, _ := os.ReadFile(w.logPath)
	return string(b)
}

// queryStep: terraform query -generate-config-out in a directory of its
// own, optionally a group vanishing, then a plan of what it generated.
func (w *campaignRun) queryStep(s campaignStep) {
	dir := filepath.Join(filepath.Dir(w.tf.Dir), fmt.Sprintf("query-%d", w.cur+1))
	q := &demo.Terraform{Bin: w.tf.Bin, Dir: dir, CLIConfig: w.tf.CLIConfig, WithoutLogging: true}
	query := exampleFileText(w.t, groupListExample) + "\n" + exampleFileText(w.t, shardCountListExample)
	writeWorkFiles(w.t, dir, map[string]string{"main.tf": w.env.ProviderConfig(), "campaign.tfquery.hcl": query})
	if code, _ := w.runIn(q, "query", "-generate-config-out=generated.tf"); code != 0 {
		w.violate("query_plans", "terraform query -generate-config-out exited %d", code)
		return
	}
	vanished := s.Variant == 1
	if vanished {
		g := w.m.inConfig(s.Prefix)[0]
		w.oob("oob_delete", g.Prefix, g.Name, 0)
		w.countsBefore()
	}
	code, out := w.runIn(q, "plan", "-out=q.tfplan")
	if code != 0 {
		// A group that vanished after the query may fail its import, and
		// nothing else may fail.
		if !vanished || campaignInvalid.MatchString(out) {
			w.violate("query_plans", "terraform plan of the configuration terraform query generated exited %d", code)
		}
		return
	}
	for _, rc := range w.showPlan(q, "q.tfplan").ResourceChanges {
		if rc.Change != nil && (rc.Change.Actions.Create() || rc.Change.Actions.Replace()) {
			w.violate("import_never_creates", "the plan of the generated configuration creates %s (%v)", rc.Address, rc.Change.Actions)
			return
		}
	}
}

// actionStep: one group of camp-a loses its consumers, the prefix is scaled
// out of band (that group's migration stays ACTIVE, the others complete),
// then a prefix-wide rollback_migration is invoked.
func (w *campaignRun) actionStep(s campaignStep) {
	w.clean = false
	groups := w.m.inConfig(s.Prefix)
	idle := groups[len(groups)-1]
	w.consumersOf(idle.Prefix, idle.Name, 0)
	defer w.join(idle.Prefix, idle.Name)
	cur, err := w.getGroup(s.Prefix, groups[0].Name)
	if err != nil {
		w.note("action: %v", err)
		return
	}
	to := s.Count
	if int32(to) == cur.ShardCount {
		to++
	}
	w.oob("oob_scale", s.Prefix, "", to)
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if g, err := w.getGroup(s.Prefix, groups[0].Name); err != nil || g.ActiveMigration == nil {
			break
		}
	}
	w.countsBefore() // the out-of-band scale above is not the action's doing
	before := w.splitBase[s.Prefix]
	cfg := fmt.Sprintf("action \"redisstreamcoordinator_rollback_migration\" \"campaign\" {\n  config {\n    stream_prefix = %q\n    reason        = \"campaign: roll back\"\n  }\n}\n", s.Prefix)
	file := filepath.Join(w.tf.Dir, "action.tf")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		w.t.Fatal(err)
	}
	defer func() { _ = os.Remove(file) }()
	w.run("apply", "-auto-approve", "-invoke=action.redisstreamcoordinator_rollback_migration.campaign")
	after := w.prefixCounts(s.Prefix)
	if splitsPrefix(before, after) {
		w.violate("no_split_prefix", "stream prefix %s was at one shard count (%v) and the rollback left it at %v", s.Prefix, before, after)
	}
}

// prefixCounts are the coordinator's shard counts of the prefix's groups.
func (w *campaignRun) prefixCounts(p string) map[string]int32 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, err := w.env.Client().Groups(ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]int32{}
	for _, g := range groups {
		if g.StreamPrefix == p {
			out[g.ConsumerGroup] = g.ShardCount
		}
	}
	return out
}

// splitsPrefix is no_split_prefix's rule: a prefix at one shard count
// before a command is at two after it. A drained prefix (every group at 0
// shards) is judged apart for the groups the command created in it: the
// coordinator creates a group with at least 1 shard and no sibling's count
// (CONTRACT §4.2, §4.6), so such a group starts at another count than its
// siblings whatever the provider does, and the plan says so
// (shard_counts_drained.go). The apply's scale, after the create, brings the
// prefix back to one count; an apply interrupted or failed between the two
// sends nothing more, and prefix_at_count_after_apply holds the next
// successful apply to the repair. The groups from before are still judged
// among themselves, and the created ones among themselves (campaign seed
// 530108684).
func splitsPrefix(before, after map[string]int32) bool {
	if distinct(before) != 1 {
		return false
	}
	if !drainedCounts(before) {
		return distinct(after) > 1
	}
	had, created := map[string]int32{}, map[string]int32{}
	for g, n := range after {
		if _, ok := before[g]; ok {
			had[g] = n
		} else {
			created[g] = n
		}
	}
	return distinct(had) > 1 || distinct(created) > 1
}

// drainedCounts reports a prefix whose groups are all at 0 shards.
func drainedCounts(m map[string]int32) bool {
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return len(m) > 0
}

func distinct(m map[string]int32) int {
	seen := map[int32]bool{}
	for _, v := range m {
		seen[v] = true
	}
	return len(seen)
}

// acknowledgeStep follows the metadata runbook: acknowledged_metadata_version
// set to what the coordinator reports now on the step's group, on its
// prefix's shard count resource, and on every other resource whose group
// regressed (a plan fails closed on each of them, and the user acknowledges
// each one the errors name), a consumer (re)joining meanwhile, then apply.
// A regressed resource whose state still holds that very value, an
// acknowledgement applied before the regression and not yet removed by an
// apply (the apply after an earlier acknowledge step failed), cannot be
// acknowledged with it: a value applied earlier never accepts a new
// regression (it may have been left in the configuration), and the error
// names the other way out, which the step takes for it: `terraform state rm`
// and an import block, in the same apply.
func (w *campaignRun) acknowledgeStep(s campaignStep) {
	g := w.m.group(s.Addr)
	acked := map[string]string{} // resource address → "prefix/group" it acknowledges
	var regressed []string
	for _, p := range campaignPrefixes {
		groups := w.m.inConfig(p)
		for i, grp := range groups {
			key := p + "/" + grp.Name
			if grp.Addr != g.Addr && !w.regressed[key] {
				continue
			}
			acked[grp.Addr] = key
			if i == 0 || p == g.Prefix {
				acked[scAddr(p)] = p + "/" + groups[0].Name
			}
			if w.regressed[key] {
				regressed = append(regressed, key)
			}
		}
	}
	st := w.state()
	var block strings.Builder
	for addr, key := range acked {
		prefix, name, _ := strings.Cut(key, "/")
		cur, err := w.getGroup(prefix, name)
		if err != nil {
			continue
		}
		w.ack[addr] = cur.MetadataVersion
		full := "redisstreamcoordinator_group." + addr
		if addr == scAddr(prefix) {
			full = "redisstreamcoordinator_group_shard_count." + addr
		}
		if applied, ok := st[full]["acknowledged_metadata_version"].(float64); ok && w.regressed[key] && int64(applied) == cur.MetadataVersion {
			if code, _ := w.run("state", "rm", full); code != 0 {
				w.t.Fatalf("terraform state rm %s exited %d", full, code)
			}
			fmt.Fprintf(&block, "import {\n  to = %s\n  id = %q\n}\n", full, key)
			w.note("%s still holds acknowledged_metadata_version = %d, applied before %s regressed: state rm and import instead", full, cur.MetadataVersion, key)
		}
	}
	if block.Len() > 0 {
		importFile := filepath.Join(w.tf.Dir, "import.tf")
		if err := os.WriteFile(importFile, []byte(block.String()), 0o600); err != nil {
			w.t.Fatal(err)
		}
		defer func() { _ = os.Remove(importFile) }()
	}
	w.writeConfig()
	w.churn(g.Prefix, g.Name, "restart") // consumers rejoin after a restore
	code, out := w.run("apply", "-auto-approve")
	if code != 0 && len(regressed) > 0 && campaignRegression.MatchString(out) {
		w.violate("acknowledge_recovers", "the apply with acknowledged_metadata_version as the coordinator reported it on %v exited %d", regressed, code)
		return
	}
	if code == 0 {
		for _, key := range regressed {
			delete(w.regressed, key)
		}
		w.ack = map[string]int64{}
		w.writeConfig()
		w.afterApply(false) // the acknowledgement is still to be removed from the configuration
	} else {
		w.clean = false
	}
}

// provisionFaultScale: a configuration change of the prefix's count,
// applied while the coordinator cannot provision the shards of a group after
// the prefix's first (name order, the order a stream scale takes them in):
// the stream scale fails part-way, the earlier groups ACTIVE at the new
// count, that group PREPARING at the old one. The fault outlasts the
// provider's retries and resumes; once the apply ended, Redis is healthy
// again (the fault is cleared), and the prefix is left split for the next
// apply to repair.
func (w *campaignRun) provisionFaultScale(s campaignStep) {
	w.clean = false
	w.applyChange(s)
	var names []string
	for name := range w.prefixCounts(s.Prefix) {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) < 2 {
		w.note("provision fault: stream prefix %s has %d group(s), none after the first to fail", s.Prefix, len(names))
	} else {
		failing := names[1+s.Variant%(len(names)-1)]
		w.c.FailProvisioning(coordinator.ProvisioningFault{StreamPrefix: s.Prefix, ConsumerGroup: failing,
			Operation: coordinator.ProvisionScale, Times: 1 << 20})
		w.note("provision fault: every scale of %s/%s fails to provision its shards (503 REDIS_STREAM_PROVISIONING_FAILED) during the apply", s.Prefix, failing)
	}
	code, _ := w.run("apply", "-auto-approve")
	w.c.ClearProvisioningFaults()
	w.note("provision fault cleared; stream prefix %s is at %v", s.Prefix, w.prefixCounts(s.Prefix))
	if code == 0 {
		w.afterApply(false)
	}
}

// campaignSecondGroup is the name of the second workspace's group in each
// prefix (after the main workspace's g1, g2, … in name order).
const campaignSecondGroup = "ws2"

// secondWorkspace: a second terraform working directory, with its own
// state, manages a group of the step's prefix and nothing else (a
// redisstreamcoordinator_group: the main workspace's shard count resource
// manages the prefix). It creates the group (shard count omitted: the
// prefix's) or deletes it, as s.Other says, with a consumer started before
// the create and stopped after the delete. For the main workspace that is a
// change out of band.
func (w *campaignRun) secondWorkspace(s campaignStep) {
	w.writeSecond(s)
	code, _ := w.runIn(w.second, "apply", "-auto-approve")
	w.afterSecond(s, code)
}

// secondReplaceWhileWaiting: the main workspace applies a count change of
// the prefix; the first GET after its stream scale (its read-back, or its
// wait's first poll round) is held while the second workspace replaces its
// group of the prefix (-replace: DELETE, then create with the siblings'
// count), then served. The delete ends the second group's migration that the
// main apply tracks (CONTRACT §4.4): its wait must say who ended it, never
// blame the coordinator (wait_names_the_cause), and an apply that succeeds
// leaves the prefix at the count (prefix_at_count_after_apply).
func (w *campaignRun) secondReplaceWhileWaiting(s campaignStep) {
	w.applyChange(s)
	w.writeSecond(s)
	var held, released atomic.Bool
	replaced := make(chan struct{})
	replace := func() {
		defer close(replaced)
		defer released.Store(true)
		w.consumersOf(s.Prefix, campaignSecondGroup, 0)
		code, _ := w.runIn(w.second, "apply", "-auto-approve", "-replace=redisstreamcoordinator_group."+strings.ReplaceAll(s.Prefix, "-", "_")+"_second")
		w.join(s.Prefix, campaignSecondGroup)
		w.note("second workspace: replaced %s/%s while the main workspace's apply waited: exit %d", s.Prefix, campaignSecondGroup, code)
	}
	hold := coordinator.Fault{Method: http.MethodGet, Kind: coordinator.FaultDelay, Delay: 2 * time.Minute, Until: released.Load,
		OnMatch: func() {
			if held.CompareAndSwap(false, true) {
				go replace()
			}
		}}
	w.c.InjectFault(coordinator.Fault{Method: http.MethodPost, Route: coordinator.RouteStreamScale, Kind: coordinator.FaultDelay,
		OnMatch: func() { w.c.InjectFault(hold) }})
	var out strings.Builder
	w.tf.Stdout, w.tf.Stderr = &out, &out
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	n := w.audited()
	code, err := w.tf.Run(ctx, "apply", "-auto-approve", "-no-color", "-input=false")
	if err != nil {
		w.t.Fatal(err)
	}
	if held.Load() {
		<-replaced
	}
	w.c.ClearFaults()
	w.lastOut, w.lastTF = out.String(), w.tf
	w.record([]string{"apply", "-auto-approve", "(the second workspace replaces its group of " + s.Prefix + " while this apply waits)"}, code, out.String())
	for _, v := range destroyedThenRefused(w.terraformEvents(n), code, out.String(), w.leftDeleted) {
		w.violate("no_destroy_then_refuse", "terraform apply sent %s", v)
	}
	if campaignBlamesCoordinator.MatchString(out.String()) {
		w.violate("wait_names_the_cause", "the apply blamed the coordinator's availability for a group another workspace replaced while it waited (exit %d)", code)
	}
	if code == 0 {
		w.checkPrefixesAtCount()
	}
	w.clean = false
}

// campaignBlamesCoordinator are the words of an apply that took another
// actor's change for an outage.
var campaignBlamesCoordinator = regexp.MustCompile(`stayed\s+unavailable|max_retries`)

// secondSavedPlan: the second workspace makes a saved plan of its change,
// then the main workspace adds a group to the prefix and applies (another
// group appears in the prefix, and the prefix's count may move), then the
// second workspace applies its saved plan (no_crash: no "inconsistent final
// plan").
//
// The main workspace's addition happens whether or not the second
// workspace's plan succeeded: the generator's model has the new group. A
// create's saved plan is made first too: what its group's siblings decide
// (sibling_shard_counts, an omitted initial_shard_count) is known after
// apply, so Terraform's re-plan during apply agrees with it (issue 43).
func (w *campaignRun) secondSavedPlan(s campaignStep) {
	w.writeSecond(s)
	planned, _ := w.runIn(w.second, "plan", "-out=second.tfplan")
	w.note("second workspace: plan -out of %s exited %d; the main workspace applies the addition of a group of %s", s.Other, planned, s.Prefix)
	w.applyChange(s)
	code, _ := w.run("apply", "-auto-approve")
	w.afterConfigApply(code, "")
	w.clean = false
	if planned != 0 || w.failed {
		return
	}
	code, _ = w.runIn(w.second, "apply", "second.tfplan")
	w.afterSecond(s, code)
}

// writeSecond writes the second workspace's configuration with s's change.
func (w *campaignRun) writeSecond(s campaignStep) {
	w.clean = false
	if w.second == nil {
		w.second = &demo.Terraform{Bin: w.tf.Bin, Dir: filepath.Join(filepath.Dir(w.tf.Dir), "second"), CLIConfig: w.tf.CLIConfig, WithoutLogging: true}
		if err := os.MkdirAll(w.second.Dir, 0o700); err != nil {
			w.t.Fatal(err)
		}
	}
	key := s.Prefix + "/" + campaignSecondGroup
	create := s.Other != "delete"
	if create && len(w.consumers[key]) == 0 {
		w.join(s.Prefix, campaignSecondGroup)
	}
	// The model's record, as the generator's (applyStepToModel): a
	// replacement beside the second workspace's group omits its count.
	w.m.Second[s.Prefix] = create
	cfg := w.env.ProviderConfig()
	for _, p := range campaignPrefixes {
		if w.m.Second[p] {
			cfg += groupHCL(strings.ReplaceAll(p, "-", "_")+"_second", p, campaignSecondGroup, `deletion_policy = "DELETE"`, "force_delete = true")
		}
	}
	writeWorkFiles(w.t, w.second.Dir, map[string]string{"main.tf": cfg})
}

func (w *campaignRun) afterSecond(s campaignStep, code int) {
	key := s.Prefix + "/" + campaignSecondGroup
	if s.Other == "delete" {
		w.consumersOf(s.Prefix, campaignSecondGroup, 0)
	}
	w.note("second workspace: %s %s exited %d; stream prefix %s is at %v", s.Other, key, code, s.Prefix, w.prefixCounts(s.Prefix))
}
