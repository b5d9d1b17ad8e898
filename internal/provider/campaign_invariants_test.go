package provider

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// campaignInvariants are checked after every step; the name is what a
// failure reports and what CAMPAIGN_INVARIANTS_OFF takes. The issue items
// each one holds the provider to are in brackets.
var campaignInvariants = map[string]string{
	"no_crash":                      "no crash (\"Plugin did not respond\", panic), no \"inconsistent result\" or \"inconsistent final plan\" [23.1, 24.3, 24.5]",
	"error_names_request":           "every error about a coordinator answer or a lost one names the errorCode (when the coordinator sent one) and the request id [provider rules]",
	"saved_plan_sends_shown":        "the apply of a saved plan sends only what the plan showed [23.1]",
	"saved_plan_not_refused":        "a saved plan is refused only when something it showed changed: consumer churn alone never makes it refused [23.1]",
	"clean_apply_succeeds":          "from a state with no out-of-band change, an apply of a configuration change succeeds, whatever consumers do meanwhile [23.1, 24.3, 24.7]",
	"empty_after_apply":             "after a successful apply with no out-of-band change (consumer churn aside), the next plan is empty [23.1]",
	"refresh_never_fails":           "a refresh never fails on a state the coordinator can be in (deleted, created again, restored, rolled back, scaled) [24.2]",
	"state_matches":                 "right after a successful apply or refresh, state never claims a group or a count the coordinator lacks [24.1, 24.3]",
	"nothing_after_sigint":          "nothing new is sent after an interrupt: only the request already in flight completes [24.4]",
	"interrupted_apply_resumes":     "from a state with no out-of-band change, the apply after an interrupted one finishes what it started (an unfinished wait resumed, finished or not by then; what was not sent, sent), with only consumer churn between [24.4, 23.1]",
	"import_never_creates":          "an import never creates: an import of a group the coordinator lacks fails, and nothing is created [24.1]",
	"import_plan_only_once":         "only an import's own plan reports what the import found (a migration under way is reported, not waited on); a later plan, -refresh=false included, plans from state [24.1, 24.7]",
	"query_plans":                   "what terraform query generates validates and plans as imports only, with no create [24.1, 24.7]",
	"no_split_prefix":               "no terraform command (an action, an apply, an interrupted or failed one) leaves a stream prefix at two shard counts when it was at one (a group it created in a drained prefix aside: the coordinator creates at 1 shard or more, the plan warns, and the scale after the create repairs it) [24.6]",
	"prefix_at_count_after_apply":   "after a successful apply (exit 0), every group of a stream prefix whose shard count resource the workspace manages (its own, another workspace's, one it abandoned) is at the configured shard_count or has a migration under way to it that is not PREPARING: a split prefix is repaired, not left to producers [30]",
	"acknowledge_recovers":          "acknowledging a metadata regression as the runbook says makes the plan pass, consumers rejoining or not [23.2]",
	"lost_answer_settles":           "a mutation whose answer a gateway lost (502/504 after forwarding, a reset before or after, a garbled 2xx, an answer that never comes) is settled by reading back: the apply succeeds [23.2, 24.8, the coordinator-failures guide]",
	"no_destroy_then_refuse":        "an apply that refuses a plan in a stream prefix (saying nothing was sent) sent no rollback in it, and left no group of it that the configuration has deleted by its own DELETE [43]",
	"wait_names_the_cause":          "an apply whose wait meets a sibling group that another workspace replaced says so, and never blames the coordinator's availability or points at max_retries [43.5]",
	"state_agrees_with_diagnostics": "the state a successful apply leaves never contradicts its own diagnostics: a scale-out it warned waits for a consumer is not recorded as completing by itself, and a preview that does not complete by itself says what it waits for [43.7]",
	"unknown_provider_plans":        "a plan with a provider configuration unknown at plan time does not fail, unless the metadata guard fails it closed on a regression recorded in state and not acknowledged, as it fails every plan [24.5, 23.2]",
}

// campaignCrash are terraform's words for a provider that crashed or broke
// the protocol's promises.
var campaignCrash = regexp.MustCompile(`Plugin did not respond|panic:|goroutine \d+ \[|inconsistent result after apply|inconsistent final plan|Provider produced invalid plan|Provider produced invalid object|unexpected EOF from plugin`)

// outputViolations checks one command's output for no_crash and
// error_names_request.
func outputViolations(out string) (crash string, unnamed []string) {
	if m := campaignCrash.FindString(out); m != "" {
		crash = m
	}
	for _, block := range errorBlocks(out) {
		flat := strings.Join(strings.Fields(block), " ")
		aboutAnswer := regexp.MustCompile(`answered \d{3}|connection reset|EOF|request timed out|deadline exceeded|lost answer|no answer`).MatchString(flat)
		if !aboutAnswer {
			continue
		}
		if !regexp.MustCompile(`(?i)request id`).MatchString(flat) {
			unnamed = append(unnamed, "no request id: "+firstLine(flat))
			continue
		}
		// A coordinator 4xx always carries an errorCode (CONTRACT §3).
		if regexp.MustCompile(`answered 4\d\d`).MatchString(flat) && !strings.Contains(flat, "errorCode") {
			unnamed = append(unnamed, "no errorCode: "+firstLine(flat))
		}
	}
	return crash, unnamed
}

// errorBlocks splits terraform's output into its "Error: …" diagnostics.
func errorBlocks(out string) []string {
	var blocks []string
	parts := strings.Split(out, "Error: ")
	for _, p := range parts[1:] {
		if i := strings.Index(p, "\nWarning: "); i >= 0 {
			p = p[:i]
		}
		blocks = append(blocks, p)
	}
	return blocks
}

func firstLine(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// shownMutations is what a saved plan shows it will send: per mutation
// "ACTION prefix[/group]" keys, and for scales the target count.
type shownMutations struct {
	allowed map[string]bool
	scaleTo map[string]int // prefix → shard_count of a planned scale
}

func mutationsShown(plan *tfjson.Plan) shownMutations {
	s := shownMutations{allowed: map[string]bool{}, scaleTo: map[string]int{}}
	for _, rc := range plan.ResourceChanges {
		if rc.Change == nil {
			continue
		}
		a := rc.Change.Actions
		after, _ := rc.Change.After.(map[string]any)
		before, _ := rc.Change.Before.(map[string]any)
		switch rc.Type {
		case "redisstreamcoordinator_group":
			if a.Create() || a.Replace() {
				p, g := fmt.Sprint(after["stream_prefix"]), fmt.Sprint(after["consumer_group"])
				s.allowed[coordinator.ActionCreateGroup+" "+p+"/"+g] = true
				s.allowed[coordinator.ActionCreateStream+" "+p] = true
			}
			if (a.Delete() || a.Replace()) && before != nil && before["deletion_policy"] == "DELETE" {
				s.allowed[coordinator.ActionDeleteGroup+" "+fmt.Sprint(before["stream_prefix"])+"/"+fmt.Sprint(before["consumer_group"])] = true
			}
		case "redisstreamcoordinator_group_shard_count":
			if (!a.Create() && !a.Update() && !a.Replace()) || after == nil {
				continue
			}
			p := fmt.Sprint(after["stream_prefix"])
			resharding, _ := after["resharding"].(map[string]any)
			if resharding != nil && resharding["plan_check"] == planCheckUnderWay {
				continue // "applying waits for it and sends no scale"
			}
			if n, ok := after["shard_count"].(float64); ok {
				s.allowed[coordinator.ActionScaleStream+" "+p] = true
				s.allowed[coordinator.ActionScaleGroup+" "+p] = true
				s.scaleTo[p] = int(n)
			}
			if after["rollback_on_revert"] == true {
				s.allowed[coordinator.ActionRollbackMigration+" "+p] = true
			}
		}
	}
	return s
}

// notShown returns the events that the saved plan did not show.
func (s shownMutations) notShown(events []coordinator.AuditEvent) []string {
	var out []string
	for _, e := range events {
		key := e.Action + " " + e.StreamPrefix
		if e.ConsumerGroup != nil && (e.Action == coordinator.ActionCreateGroup || e.Action == coordinator.ActionDeleteGroup) {
			key += "/" + *e.ConsumerGroup
		}
		switch {
		case !s.allowed[key]:
			out = append(out, fmt.Sprintf("%s %s (request id %s, %d)", e.Action, e.Path, e.RequestID, e.Status))
		case e.Action == coordinator.ActionScaleStream || e.Action == coordinator.ActionScaleGroup:
			if to := e.RequestSummary["targetShardCount"]; to != "" && to != fmt.Sprint(s.scaleTo[e.StreamPrefix]) {
				out = append(out, fmt.Sprintf("%s %s to %s shards, the plan showed %d (request id %s)", e.Action, e.Path, to, s.scaleTo[e.StreamPrefix], e.RequestID))
			}
		}
	}
	return out
}

// checkPrefixesAtCount is prefix_at_count_after_apply, right after a
// successful apply: every group the coordinator has under a prefix whose
// shard count resource is in the configuration (an anchor group is never
// removed from it) is at the configured count, or has a migration to it
// under way that is not PREPARING (a PREPARING migration never moves by
// itself, CONTRACT §4.6).
func (w *campaignRun) checkPrefixesAtCount() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	groups, err := w.env.Client().Groups(ctx)
	if err != nil {
		w.t.Fatalf("campaign seed %d: list groups: %v", w.seed, err)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].ConsumerGroup < groups[j].ConsumerGroup })
	for _, p := range campaignPrefixes {
		if len(w.m.inConfig(p)) == 0 {
			continue
		}
		want := w.m.Counts[p]
		var all, off []string
		for _, g := range groups {
			if g.StreamPrefix != p {
				continue
			}
			am := g.ActiveMigration
			desc := fmt.Sprintf("%s: %d", g.ConsumerGroup, g.ShardCount)
			if !am.Finished() {
				desc += fmt.Sprintf(" (%s migration %d→%d)", am.State, am.FromShardCount, am.ToShardCount)
			}
			all = append(all, desc)
			underWay := !am.Finished() && int(am.ToShardCount) == want && am.State != client.MigrationPreparing
			if int(g.ShardCount) != want && !underWay {
				off = append(off, g.ConsumerGroup)
			}
		}
		if len(off) > 0 {
			w.violate("prefix_at_count_after_apply", "the apply succeeded with shard_count = %d for stream prefix %s, but group(s) %s are neither at %d nor under way to it; the prefix's groups (shard counts): %s",
				want, p, strings.Join(off, ", "), want, strings.Join(all, "; "))
			return
		}
	}
}

// campaignNothingSent is the claim a refusal of the provider makes.
var campaignNothingSent = regexp.MustCompile(`(?i)nothing (more )?was sent`)

// destroyedThenRefused is no_destroy_then_refuse for one apply: events are
// what terraform sent during it; out is its output. A refusal is an error
// that says nothing (more) was sent. It returns each rollback in a prefix
// whose refusal names it, and each DELETE of a group of such a prefix that
// the apply left deleted although the configuration has it (left(p, g):
// the harm of a stale replacement deleted, then refused).
func destroyedThenRefused(events []coordinator.AuditEvent, code int, out string, left func(p, g string) bool) []string {
	if code == 0 {
		return nil
	}
	var refusals []string
	for _, b := range errorBlocks(out) {
		if b = strings.Join(strings.Fields(b), " "); campaignNothingSent.MatchString(b) {
			refusals = append(refusals, b)
		}
	}
	// names reports a refusal that names stream prefix p: in its title
	// (the detail may list every group of the prefix), or anywhere when
	// the group is left deleted, which no refusal excuses.
	names := func(r, p string, anywhere bool) bool {
		if !anywhere {
			r, _, _ = strings.Cut(r, " with ")
		}
		return strings.Contains(r, fmt.Sprintf("%q", p)) || strings.Contains(r, p+"/")
	}
	var found []string
	for _, e := range events {
		if e.Outcome != coordinator.OutcomeSuccess || len(refusals) == 0 {
			continue
		}
		p, g := e.StreamPrefix, deref(e.ConsumerGroup)
		if e.Action != coordinator.ActionDeleteGroup && e.Action != coordinator.ActionRollbackMigration {
			continue
		}
		for _, r := range refusals {
			deleted := e.Action == coordinator.ActionDeleteGroup
			if names(r, p, deleted) && (!deleted || left(p, g)) {
				found = append(found, fmt.Sprintf("%s of %s/%s (request id %s), then the refusal %q", e.Action, p, g, e.RequestID, firstLine(r)))
				break
			}
		}
	}
	return found
}

// no_destroy_then_refuse names a DELETE that a refusal left deleted, or a
// rollback in a prefix a refusal names, and nothing else.
func TestDestroyedThenRefused(t *testing.T) {
	str := func(s string) *string { return &s }
	del := coordinator.AuditEvent{Action: coordinator.ActionDeleteGroup, Outcome: coordinator.OutcomeSuccess, StreamPrefix: "p", ConsumerGroup: str("g2"), RequestID: "terraform-1"}
	del2 := coordinator.AuditEvent{Action: coordinator.ActionDeleteGroup, Outcome: coordinator.OutcomeSuccess, StreamPrefix: "p", ConsumerGroup: str("gone"), RequestID: "terraform-4"}
	rb := coordinator.AuditEvent{Action: coordinator.ActionRollbackMigration, Outcome: coordinator.OutcomeSuccess, StreamPrefix: "p", ConsumerGroup: str("g1"), RequestID: "terraform-2"}
	scale := coordinator.AuditEvent{Action: coordinator.ActionScaleStream, Outcome: coordinator.OutcomeSuccess, StreamPrefix: "p", RequestID: "terraform-3"}
	stale := "\nError: Stale plan: the groups of stream prefix \"p\" changed since the plan was made\n\n  with x\n\nGroup \"g2\" went. Nothing was sent to the coordinator.\n"
	other := "\nError: Stale plan: the groups of stream prefix \"q\" changed since the plan was made\n\nGroup \"g2\" went. Nothing was sent to the coordinator.\n"
	failed := "\nError: Failed to scale stream prefix \"p\" to 4 shards\n\nGroup \"g2\".\n"
	cases := []struct {
		name   string
		events []coordinator.AuditEvent
		code   int
		out    string
		want   int
	}{
		{"a delete left deleted, then a refusal", []coordinator.AuditEvent{del}, 1, stale, 1},
		{"a delete left deleted, then a create refused naming the prefix in its detail", []coordinator.AuditEvent{del}, 1,
			"\nError: Shard count differs from the other groups of the stream prefix\n\n  with x\n\nThis apply already deleted group \"g2\" of \"p\". Nothing was sent to the coordinator.\n", 1},
		{"a delete the configuration dropped, then a refusal", []coordinator.AuditEvent{del2}, 1, stale, 0},
		{"a rollback, then a refusal naming the prefix", []coordinator.AuditEvent{rb}, 1, stale, 1},
		{"a scale is not destructive", []coordinator.AuditEvent{scale}, 1, stale, 0},
		{"a rollback, then a refusal of another prefix", []coordinator.AuditEvent{rb}, 1, other, 0},
		{"an error that is not a refusal", []coordinator.AuditEvent{del}, 1, failed, 0},
		{"a successful apply", []coordinator.AuditEvent{del}, 0, stale, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			left := func(p, g string) bool { return p == "p" && g == "g2" }
			if got := destroyedThenRefused(tc.events, tc.code, tc.out, left); len(got) != tc.want {
				t.Errorf("got %d (%q), want %d", len(got), got, tc.want)
			}
		})
	}
}

// The warning state_agrees_with_diagnostics reads, as terraform prints it:
// the resource's lines between title and detail, the detail wrapped.
func TestCampaignWaitsForConsumerWarning(t *testing.T) {
	out := "╷\n│ Warning: Scale-out of group \"camp_a_1\" waits for a consumer\n│ \n│   with redisstreamcoordinator_group_shard_count.camp_a,\n" +
		"│   on main.tf line 30, in resource \"redisstreamcoordinator_group_shard_count\" \"camp_a\":\n│   30: resource \"redisstreamcoordinator_group_shard_count\" \"camp_a\" {\n│ \n" +
		"│ Group \"camp_a_1\" under stream\n│ prefix \"camp-a\" has no live consumer, and a scale-out only completes once\n╵\n" +
		"╷\n│ Warning: Resharding stream prefix \"camp-b\"\n╵\n"
	var got []string
	for _, m := range campaignWaitsForConsumer.FindAllStringSubmatch(out, -1) {
		got = append(got, m[1])
	}
	if len(got) != 1 || got[0] != "camp-a" {
		t.Fatalf("prefixes read from the warning: %v, want [camp-a]", got)
	}
}
