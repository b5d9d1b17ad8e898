package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

var (
	campaignChurn = []string{"none", "join", "leave", "restart", "expire", "stall"}
	// campaignStale are the words of a saved plan refused as stale.
	campaignStale = regexp.MustCompile(`(?i)stale plan|changed since the plan`)
)

// campaignOutOfBand are the step kinds that change the coordinator without
// terraform.
var campaignOutOfBand = []string{"churn", "oob_scale", "oob_group_scale", "oob_rollback", "oob_delete", "oob_recreate", "oob_restore"}

// exec runs one step and checks its invariants; around a terraform step,
// no_split_prefix. A provision_fault_scale splits its prefix by design: its
// stream scale fails part-way on the provisioning fault (prefix_at_count_after_apply
// judges the apply that comes after it).
func (w *campaignRun) exec(s campaignStep) {
	if slices.Contains(campaignOutOfBand, s.Kind) || s.Kind == "provision_fault_scale" {
		w.execStep(s)
		return
	}
	w.countsBefore()
	w.execStep(s)
	for _, p := range campaignPrefixes {
		if after := w.prefixCounts(p); splitsPrefix(w.splitBase[p], after) {
			w.violate("no_split_prefix", "stream prefix %s was at one shard count (%v) and terraform left it at %v", p, w.splitBase[p], after)
		}
	}
}

// countsBefore records the prefixes' counts that no_split_prefix compares
// with after the step (again after an out-of-band change within the step).
func (w *campaignRun) countsBefore() {
	w.splitBase = map[string]map[string]int32{}
	for _, p := range campaignPrefixes {
		w.splitBase[p] = w.prefixCounts(p)
	}
}

func (w *campaignRun) execStep(s campaignStep) {
	anchor := func(p string) string { return w.m.inConfig(p)[0].Name }
	target := func() (string, string) {
		if g := w.m.group(s.Addr); g != nil {
			return g.Prefix, g.Name
		}
		return s.Prefix, anchor(s.Prefix)
	}
	switch s.Kind {
	case "churn":
		p, g := target()
		w.churn(p, g, s.Between)
		applyStepToModel(w.m, s)
	case "oob_scale", "oob_group_scale", "oob_rollback", "oob_delete", "oob_recreate", "oob_restore":
		p, g := target()
		w.oob(s.Kind, p, g, s.Count)
	case "provision_fault_scale":
		w.provisionFaultScale(s)
	case "second_workspace":
		switch {
		case s.Other == "replace":
			w.secondReplaceWhileWaiting(s)
		case s.Variant == 1:
			w.savedPlan(s, anchor(s.Prefix))
		case s.Variant == 2:
			w.secondSavedPlan(s)
		default:
			w.secondWorkspace(s)
		}
	case "plan":
		if code, _ := w.run("plan", "-detailed-exitcode"); w.clean && code != 0 {
			w.violate("empty_after_apply", "terraform plan exited %d (2: changes, 1: failed) after a successful apply with consumer churn only since", code)
		}
	case "refresh":
		code, _ := w.run("apply", "-refresh-only", "-auto-approve")
		if code != 0 {
			w.violate("refresh_never_fails", "terraform apply -refresh-only exited %d", code)
			return
		}
		w.checkStateMatches()
	case "apply":
		w.applyChange(s)
		stop := w.joinAtGET(s.Prefix, anchor(s.Prefix), s.AtGET)
		code, _ := w.run("apply", "-auto-approve")
		stop()
		w.afterConfigApply(code, "terraform apply")
	case "saved_plan":
		w.savedPlan(s, anchor(s.Prefix))
	case "fault_apply":
		mustSucceed := w.mustSucceed()
		w.applyChange(s)
		w.faultOn(s.Fault, mutationRoute(s.Change))
		code, _ := w.run("apply", "-auto-approve")
		w.c.ClearFaults()
		if mustSucceed && code != 0 {
			w.violate("lost_answer_settles", "terraform apply exited %d after a %s in front of the coordinator on POST %s", code, s.Fault, mutationRoute(s.Change))
			return
		}
		if code == 0 {
			w.afterApply(true)
		} else {
			w.clean = false
		}
	case "interrupt":
		wasClean := w.mustSucceed()
		w.applyChange(s)
		if w.interrupt(s) && wasClean {
			w.resumeInterrupted()
		}
	case "unknown_provider":
		w.applyChange(s)
		w.unknownProvider = w.cur + 1
		w.writeConfig()
		code, out := w.run("plan")
		w.unknownProvider = 0
		w.writeConfig()
		if code != 0 && !w.failedClosedOnRegression(out) {
			w.violate("unknown_provider_plans", "terraform plan with the provider's endpoint unknown until apply exited %d", code)
		}
		w.clean = false
	case "rename", "replace":
		wasClean := w.mustSucceed()
		args := []string{"apply", "-auto-approve"}
		if s.Kind == "rename" {
			g := w.m.group(s.Addr)
			w.consumersOf(g.Prefix, g.Name, 0)
			applyStepToModel(w.m, s)
			w.join(g.Prefix, g.Name)
		} else {
			applyStepToModel(w.m, s)
			args = append(args, "-replace=redisstreamcoordinator_group."+s.Addr)
		}
		w.writeConfig()
		code, _ := w.run(args...)
		if wasClean && code != 0 && w.m.Deletion == "DELETE" {
			w.violate("clean_apply_succeeds", "the replacement of redisstreamcoordinator_group.%s (deletion_policy DELETE) exited %d", s.Addr, code)
			return
		}
		w.afterConfigApply(code, "")
	case "import":
		w.importStep(s)
	case "query":
		w.queryStep(s)
	case "action":
		w.actionStep(s)
	case "acknowledge":
		w.acknowledgeStep(s)
	}
}

// applyChange makes the step's configuration change and writes it; a new
// group gets a consumer before it exists.
func (w *campaignRun) applyChange(s campaignStep) {
	before := len(w.m.Groups)
	applyStepToModel(w.m, s)
	for _, g := range w.m.Groups[before:] {
		w.join(g.Prefix, g.Name)
	}
	w.writeConfig()
}

// afterConfigApply: an apply that was expected to succeed (clean_apply_succeeds
// when what = a description) and its aftermath.
func (w *campaignRun) afterConfigApply(code int, what string) {
	if what != "" && w.mustSucceed() && code != 0 {
		w.violate("clean_apply_succeeds", "%s of a configuration change exited %d, with nothing changed out of band since the last successful apply", what, code)
		return
	}
	if code == 0 {
		w.afterApply(true)
	} else {
		w.clean = false
	}
}

// consumersOf stops the consumers of p/g beyond keep.
func (w *campaignRun) consumersOf(p, g string, keep int) {
	k := p + "/" + g
	for len(w.consumers[k]) > keep {
		cs := w.consumers[k]
		cs[len(cs)-1].Stop()
		w.consumers[k] = cs[:len(cs)-1]
	}
}

// savedPlan: plan -out, something in between, apply of the saved plan.
func (w *campaignRun) savedPlan(s campaignStep, anchorName string) {
	// A replacement must succeed only when it deletes the old group, as the
	// rename and replace steps' (one that abandons it may find the name
	// taken, or the old group left at another count beside the new one).
	wasClean := w.mustSucceed() && ((s.Change != "replace" && s.Change != "rename") || w.m.Deletion == "DELETE")
	args := []string{"plan", "-out=tfplan"}
	switch s.Change {
	case "rename":
		g := w.m.group(s.Addr)
		w.consumersOf(g.Prefix, g.Name, 0)
		w.applyChange(s)
		w.join(g.Prefix, g.Name)
	case "replace":
		w.applyChange(s)
		args = append(args, "-replace=redisstreamcoordinator_group."+s.Addr)
	default:
		w.applyChange(s)
	}
	code, _ := w.run(args...)
	if code != 0 {
		if wasClean {
			w.violate("clean_apply_succeeds", "terraform plan -out of a configuration change exited %d, with nothing changed out of band since the last successful apply", code)
		}
		w.clean = false
		return
	}
	planned := w.showPlan(w.tf, "tfplan")
	shown := mutationsShown(planned)
	p, g := s.Prefix, anchorName
	if grp := w.m.group(s.Addr); grp != nil {
		p, g = grp.Prefix, grp.Name
	}
	churnOnly := slices.Contains(campaignChurn, s.Between)
	switch {
	case s.Kind == "second_workspace":
		w.secondWorkspace(s)
		w.countsBefore()
	case s.Between == "none":
	case churnOnly:
		w.churn(p, g, s.Between)
	default:
		count := w.m.Counts[p]%4 + 1
		w.oob(s.Between, p, g, count)
		w.countsBefore()
	}
	// Churn that takes the last consumer of a group whose scale-out is under
	// way leaves that scale-out ACTIVE for good: every scale of the prefix is
	// refused (409 ACTIVE_MIGRATION_EXISTS) until a consumer joins, and the
	// provider rightly refuses the saved plan's, which waits for it (seed
	// 772216357; mustSucceed's rule, checked after the churn).
	stuck := churnOnly && w.stuckScaleOut()
	n := w.audited()
	code, out := w.run("apply", "tfplan")
	if extra := shown.notShown(w.terraformEvents(n)); len(extra) > 0 {
		w.violate("saved_plan_sends_shown", "the apply of the saved plan sent what the plan did not show: %s", strings.Join(extra, "; "))
		return
	}
	if churnOnly && code != 0 && campaignStale.MatchString(out) {
		w.violate("saved_plan_not_refused", "the saved plan was refused after only consumer churn (%s) between plan and apply", s.Between)
		return
	}
	if churnOnly && wasClean && !stuck && code != 0 {
		w.violate("clean_apply_succeeds", "the apply of a saved plan exited %d, with only consumer churn (%s) since the plan", code, s.Between)
		return
	}
	switch {
	case code == 0 && churnOnly:
		w.afterApply(true)
	case code == 0 && s.Kind == "second_workspace":
		// Another group of the prefix appeared or went: the saved plan's
		// stream scale (if any) covers a new one, which was created at the
		// prefix's count; so the prefix is at the configured count.
		w.checkPrefixesAtCount()
		w.clean = false
	default:
		// After an out-of-band change between plan and apply, state may
		// rightly hold what the plan's refresh saw until the next refresh.
		w.clean = false
	}
}

// importStep: state rm, then an import block (by id, or by identity), and
// terraform apply; optionally the group vanished first.
func (w *campaignRun) importStep(s campaignStep) {
	g := w.m.group(s.Addr)
	addr := "redisstreamcoordinator_group." + s.Addr
	if _, ok := w.state()[addr]; !ok {
		w.note("%s is not in state: nothing to import", addr)
		return
	}
	vanished := s.Variant&2 != 0
	if vanished {
		w.oob("oob_delete", g.Prefix, g.Name, 0)
		w.countsBefore()
	}
	// The prefix's anchor group brings its shard count resource along: one
	// import block each, in the same apply.
	addrs := []string{addr}
	if sc := "redisstreamcoordinator_group_shard_count." + scAddr(g.Prefix); w.m.inConfig(g.Prefix)[0] == g {
		if _, ok := w.state()[sc]; ok {
			addrs = append(addrs, sc)
		}
	}
	var block strings.Builder
	how := "by id"
	if s.Variant&1 != 0 && w.cli.identity {
		how = "by identity"
	}
	for _, a := range addrs {
		if code, _ := w.run("state", "rm", a); code != 0 {
			w.t.Fatalf("terraform state rm %s exited %d", a, code)
		}
		if how == "by identity" {
			fmt.Fprintf(&block, "import {\n  to = %s\n  identity = {\n    stream_prefix  = %q\n    consumer_group = %q\n  }\n}\n", a, g.Prefix, g.Name)
		} else {
			fmt.Fprintf(&block, "import {\n  to = %s\n  id = %q\n}\n", a, g.Prefix+"/"+g.Name)
		}
	}
	importFile := filepath.Join(w.tf.Dir, "import.tf")
	if err := os.WriteFile(importFile, []byte(block.String()), 0o600); err != nil {
		w.t.Fatal(err)
	}
	defer func() { _ = os.Remove(importFile) }()
	n := w.audited()
	code, _ := w.run("apply", "-auto-approve")
	for _, e := range w.terraformEvents(n) {
		// Only the imported group: the same apply may re-create another
		// group of the configuration that vanished.
		if (e.Action == coordinator.ActionCreateGroup && deref(e.ConsumerGroup) == g.Name || e.Action == coordinator.ActionCreateStream) && e.StreamPrefix == g.Prefix {
			w.violate("import_never_creates", "the import %s of %s/%s sent %s %s (request id %s, status %d)", how, g.Prefix, g.Name, e.Action, e.Path, e.RequestID, e.Status)
			return
		}
	}
	if vanished && code == 0 {
		w.violate("import_never_creates", "the import %s of %s/%s, which the coordinator does not have, succeeded", how, g.Prefix, g.Name)
		return
	}
	if code == 0 && !vanished {
		w.afterApply(w.clean)
		// Only the import's own plan reports what the import found: a plan
		// from the state it left, without a refresh, is no import's plan.
		if len(addrs) > 1 {
			if _, out := w.run("plan", "-refresh=false"); strings.Contains(out, "Importing the shard count") {
				w.violate("import_plan_only_once", "terraform plan -refresh=false after the import of %s took itself for the import's plan", addrs[1])
			}
		}
	} else {
		w.clean = false
	}
}
