package prefix

import (
	"strings"
	"testing"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

func grp(name string, count int32) client.Group {
	return client.Group{StreamPrefix: "p", ConsumerGroup: name, ShardCount: count, State: client.GroupStable}
}

func migrating(name string, from, to int32, state client.MigrationState) client.Group {
	g := grp(name, to)
	if state == client.MigrationPreparing {
		g.ShardCount = from
	}
	g.ActiveMigration = &client.Migration{ReshardingID: "reshard-" + name, FromShardCount: from, ToShardCount: to, State: state}
	return g
}

func rec(groups ...client.Group) Record {
	all := append([]client.Group{{StreamPrefix: "other", ConsumerGroup: "x", ShardCount: 99}}, groups...)
	return FromListing(all, "p")
}

// summary renders a decision as "stream scale; adopt b; per-group scale c"
// or "refuse <kind> a,b".
func summary(d Decision) string {
	if d.Refusal != nil {
		var names []string
		for _, g := range d.Refusal.Groups {
			names = append(names, g.ConsumerGroup)
		}
		kind := map[RefusalKind]string{PreparingElsewhere: "preparing-elsewhere", RevertRefused: "revert-refused", WaitOnlyStale: "wait-only-stale", StalledElsewhere: "stalled-elsewhere", BlockedElsewhere: "blocked-elsewhere"}[d.Refusal.Kind]
		return "refuse " + kind + " " + strings.Join(names, ",")
	}
	if d.Done() {
		return "done"
	}
	var parts []string
	for _, s := range d.Steps {
		p := s.Kind.String()
		if s.Group != "" {
			p += " " + s.Group
		}
		if s.Resume {
			p += " (resume)"
		}
		parts = append(parts, p)
	}
	if d.Revert {
		parts = append(parts, "[revert]")
	}
	return strings.Join(parts, "; ")
}

func TestDecide(t *testing.T) {
	known := map[string]client.Migration{"b": {ReshardingID: "reshard-old-b", FromShardCount: 4, ToShardCount: 6, State: client.MigrationActive}}
	cases := []struct {
		name     string
		in       Input
		want     string
		wantSend bool
	}{
		{"every group at the target", Input{Record: rec(grp("a", 6), grp("b", 6)), Target: 6}, "done", false},
		{"empty prefix", Input{Record: rec(), Target: 6}, "done", false},
		{"a plain change: one stream scale", Input{Record: rec(grp("a", 4), grp("b", 4)), Target: 6}, "stream scale", true},
		{"a split prefix, nothing under way: one stream scale (noop for a)", Input{Record: rec(grp("a", 6), grp("b", 4)), Target: 6}, "stream scale", true},
		{"a split prefix with self behind", Input{Record: rec(grp("a", 4), grp("b", 6)), Self: "a", Target: 6}, "stream scale", true},
		{"to 0 shards", Input{Record: rec(grp("a", 4)), Target: 0}, "stream scale", true},
		{"under way to the target: adopt", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), migrating("b", 4, 6, client.MigrationDraining)), Target: 6},
			"adopt a; adopt b", false},
		{"under way to the target, a sibling left behind (a stream scale failed part-way)",
			Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), grp("b", 4)), Target: 6}, "adopt a; per-group scale b", true},
		{"a sibling PREPARING to the target is resumed", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), migrating("b", 4, 6, client.MigrationPreparing), grp("c", 4)), Target: 6},
			"adopt a; per-group scale b (resume); per-group scale c", true},
		{"only PREPARING to the target", Input{Record: rec(migrating("a", 4, 6, client.MigrationPreparing), grp("b", 6)), Target: 6}, "per-group scale a (resume)", true},
		{"PREPARING to another count refuses", Input{Record: rec(migrating("a", 4, 8, client.MigrationPreparing), grp("b", 4)), Target: 6}, "refuse preparing-elsewhere a", false},
		{"PREPARING elsewhere refuses even a count the group has", Input{Record: rec(migrating("a", 4, 8, client.MigrationPreparing)), Target: 4}, "refuse preparing-elsewhere a", false},
		{"heading elsewhere: wait for them first", Input{Record: rec(migrating("a", 4, 8, client.MigrationActive), grp("b", 4)), Target: 6}, "wait for other migrations", false},
		{"heading elsewhere, a scale-out with no live consumer: the wait would not end", Input{Record: rec(empty(migrating("a", 4, 8, client.MigrationActive)), grp("b", 4)), Target: 6},
			"refuse stalled-elsewhere a", false},
		{"heading elsewhere, a scale-in with no live consumer is waited for", Input{Record: rec(empty(migrating("a", 8, 4, client.MigrationActive)), grp("b", 8)), Target: 6},
			"wait for other migrations", false},
		{"heading elsewhere, draining", Input{Record: rec(migrating("a", 8, 2, client.MigrationDraining), grp("b", 8)), Target: 6}, "wait for other migrations", false},
		{"revert without rollback_on_revert refuses", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive)), Target: 4}, "refuse revert-refused a", false},
		{"revert with rollback_on_revert", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), migrating("b", 4, 6, client.MigrationActive)), Target: 4, RollbackOnRevert: true},
			"rollback a; rollback b; [revert]", true},
		{"revert brings a group at another count there too", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), grp("b", 6), grp("c", 4)), Target: 4, RollbackOnRevert: true},
			"rollback a; per-group scale b; [revert]", true},
		{"revert of a DRAINING migration is refused", Input{Record: rec(migrating("a", 4, 6, client.MigrationDraining)), Target: 4, RollbackOnRevert: true}, "refuse revert-refused a", false},
		{"revert mixed with a migration elsewhere is refused", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), migrating("b", 8, 6, client.MigrationActive)), Target: 4, RollbackOnRevert: true},
			"refuse revert-refused a,b", false},
		{"revert beside a migration to the target takes it over", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), migrating("b", 2, 4, client.MigrationActive), grp("c", 6)), Target: 4, RollbackOnRevert: true},
			"rollback a; adopt b; per-group scale c; [revert]", true},
		{"revert beside a migration to the target, without rollback_on_revert, names only the one reverted", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), migrating("b", 2, 4, client.MigrationDraining)), Target: 4},
			"refuse revert-refused a", false},
		{"revert beside a PREPARING migration to the target resumes it", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), migrating("b", 2, 4, client.MigrationPreparing)), Target: 4, RollbackOnRevert: true},
			"per-group scale b (resume); rollback a; [revert]", true},
		{"wait-only: under way to the target", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), grp("b", 6)), Target: 6, WaitOnly: true}, "adopt a", false},
		{"wait-only: finished meanwhile", Input{Record: rec(grp("a", 6), grp("b", 6)), Target: 6, WaitOnly: true}, "done", false},
		{"wait-only: a group behind is stale", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), grp("b", 4)), Target: 6, WaitOnly: true}, "refuse wait-only-stale b", false},
		{"wait-only: a migration elsewhere is stale", Input{Record: rec(migrating("a", 6, 8, client.MigrationActive)), Target: 6, WaitOnly: true}, "refuse wait-only-stale a", false},
		{"wait-only: a revert is stale", Input{Record: rec(migrating("a", 6, 8, client.MigrationActive)), Target: 6, WaitOnly: true, RollbackOnRevert: true}, "refuse wait-only-stale a", false},
		{"wait-only: the resumed migration ended away (rolled back) is adopted so the wait reports it",
			Input{Record: rec(grp("a", 6), grp("b", 4)), Target: 6, WaitOnly: true, Known: known}, "adopt b", false},
		{"a known migration finished at the target is adopted", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), grp("b", 6)), Target: 6, Known: known},
			"adopt a; adopt b", false},
		{"a known migration of a group away from the target: the group is behind", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), grp("b", 4)), Target: 6, Known: known},
			"adopt a; per-group scale b", true},
		{"take-over: adopt, resume and per-group scales", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), migrating("b", 4, 6, client.MigrationPreparing), grp("c", 4)), Target: 6, TakeOver: true},
			"adopt a; per-group scale b (resume); per-group scale c", true},
		{"take-over with nothing under way: per-group scales, no stream scale", Input{Record: rec(grp("a", 4), grp("b", 6), grp("c", 6)), Target: 6, TakeOver: true, Known: known},
			"per-group scale a; adopt b", true},
		{"take-over meeting a migration elsewhere is refused", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), migrating("b", 4, 3, client.MigrationDraining)), Target: 6, TakeOver: true},
			"refuse blocked-elsewhere b", false},
		{"take-over meeting a revert is refused", Input{Record: rec(migrating("a", 6, 8, client.MigrationActive), grp("b", 6)), Target: 6, TakeOver: true, RollbackOnRevert: true},
			"refuse blocked-elsewhere a", false},
		{"take-over: the decision's own refusals stand", Input{Record: rec(migrating("a", 4, 8, client.MigrationPreparing)), Target: 6, TakeOver: true},
			"refuse preparing-elsewhere a", false},
		{"waited once, still heading elsewhere: refused, not waited for again", Input{Record: rec(migrating("a", 8, 4, client.MigrationDraining), grp("b", 8)), Target: 6, Waited: true},
			"refuse blocked-elsewhere a", false},
		{"waited once, now under way to the target: decided as any other", Input{Record: rec(migrating("a", 8, 6, client.MigrationActive), grp("b", 8)), Target: 6, Waited: true},
			"adopt a; per-group scale b", true},
		{"waited once, a revert is not a wait: it rolls back", Input{Record: rec(migrating("a", 6, 8, client.MigrationActive)), Target: 6, Waited: true, RollbackOnRevert: true},
			"rollback a; [revert]", true},
		{"wait-only with ResumedWait: b rolled back away is adopted, c at the target is done",
			Input{Record: rec(grp("a", 6), grp("b", 4), grp("c", 6)), Target: 6, WaitOnly: true,
				Known: ResumedWait(rec(grp("a", 6), grp("b", 4), grp("c", 6)), 6, map[string]string{"b": "reshard-old-b", "c": "reshard-old-c"})}, "adopt b", false},
		{"wait-only with ResumedWait: a group of the wait heading elsewhere now is stale",
			Input{Record: rec(grp("a", 6), migrating("b", 4, 8, client.MigrationActive)), Target: 6, WaitOnly: true,
				Known: ResumedWait(rec(grp("a", 6), migrating("b", 4, 8, client.MigrationActive)), 6, map[string]string{"b": "reshard-old-b"})}, "refuse wait-only-stale b", false},
		{"with nothing under way a known finished one rides along the stream scale", Input{Record: rec(grp("a", 4), grp("b", 6)), Target: 6, Known: known},
			"stream scale; adopt b", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.in)
			live := true
			for _, g := range tc.in.Record.Groups {
				live = live && g.State != client.GroupEmpty
			}
			if live && len(d.NoConsumer) > 0 {
				t.Errorf("NoConsumer = %v for groups with live consumers", d.NoConsumer)
			}
			if got := summary(d); got != tc.want {
				t.Errorf("Decide = %q, want %q (record: %s)", got, tc.want, tc.in.Record)
			}
			if d.Sends() != tc.wantSend {
				t.Errorf("Sends = %v, want %v", d.Sends(), tc.wantSend)
			}
		})
	}
}

func empty(g client.Group) client.Group {
	g.State = client.GroupEmpty
	return g
}

// A scale-out of a group with no live consumer does not complete by itself;
// a scale-in of one, or a group already at the target, is not named.
func TestDecideNoConsumer(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want []string
	}{
		{"stream scale out", Input{Record: rec(empty(grp("a", 4)), grp("b", 4), empty(grp("c", 6))), Target: 6}, []string{"a"}},
		{"stream scale in", Input{Record: rec(empty(grp("a", 8))), Target: 6}, nil},
		{"per-group scale of a group behind", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), empty(grp("b", 4))), Target: 6}, []string{"b"}},
		{"every group there", Input{Record: rec(empty(grp("a", 6))), Target: 6}, nil},
		{"behind a migration elsewhere, which is waited for first", Input{Record: rec(migrating("a", 4, 8, client.MigrationActive), empty(grp("b", 4))), Target: 6}, []string{"b"}},
		{"a revert's per-group scale", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), empty(grp("b", 2))), Target: 4, RollbackOnRevert: true}, []string{"b"}},
		{"a scale-out under way to the target, taken over", Input{Record: rec(empty(migrating("a", 4, 6, client.MigrationActive)), grp("b", 6)), Target: 6}, []string{"a"}},
		{"a PREPARING scale-out to the target, resumed", Input{Record: rec(empty(migrating("a", 4, 6, client.MigrationPreparing)), grp("b", 6)), Target: 6}, []string{"a"}},
		{"a draining scale-out needs no consumer", Input{Record: rec(empty(migrating("a", 4, 6, client.MigrationDraining))), Target: 6}, nil},
		{"a scale-in under way", Input{Record: rec(empty(migrating("a", 8, 6, client.MigrationActive))), Target: 6}, nil},
		{"waited for, then scaled out from below", Input{Record: rec(empty(migrating("a", 4, 3, client.MigrationDraining)), grp("b", 4)), Target: 6}, []string{"a"}},
		{"waited for, ending above", Input{Record: rec(empty(migrating("a", 4, 8, client.MigrationDraining)), grp("b", 4)), Target: 6}, nil},
		{"a refusal names none", Input{Record: rec(migrating("a", 4, 8, client.MigrationPreparing), empty(grp("b", 4))), Target: 6}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.in).NoConsumer; strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("NoConsumer = %v, want %v", got, tc.want)
			}
		})
	}
}

// After the steps of a decision have run as planned (every migration it
// starts or adopts completed), deciding again finds nothing to do: the
// prefix is at one count. Checked over every small prefix.
func TestDecideConverges(t *testing.T) {
	states := []client.MigrationState{"", client.MigrationActive, client.MigrationDraining, client.MigrationPreparing}
	counts := []int32{2, 4, 6}
	n := 0
	for _, target := range counts {
		for _, a := range counts {
			for _, b := range counts {
				for _, sa := range states {
					for _, sb := range states {
						groups := []client.Group{mk("a", a, target, sa), mk("b", b, target, sb)}
						in := Input{Record: rec(groups...), Target: target, RollbackOnRevert: true}
						d := Decide(in)
						if d.Refusal != nil || (len(d.Steps) > 0 && d.Steps[0].Kind == WaitOthers) {
							continue
						}
						n++
						after := run(in.Record, d, target)
						if again := Decide(Input{Record: after, Target: target}); !again.Done() {
							t.Errorf("%s to %d: %s, then %s", in.Record, target, summary(d), summary(again))
						}
					}
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d decisions checked", n)
	}
}

// mk is group name at count with a migration in state st (none for "") from
// count to the other counts' first differing value, or to target.
func mk(name string, count, target int32, st client.MigrationState) client.Group {
	if st == "" {
		return grp(name, count)
	}
	to := target
	if count == target {
		to = count + 2
	}
	return migrating(name, count, to, st)
}

// run applies a decision's steps as if each completed.
func run(r Record, d Decision, target int32) Record {
	out := Record{Prefix: r.Prefix}
	for _, g := range r.Groups {
		for _, s := range d.Steps {
			switch {
			case s.Kind == StreamScale, s.Group == g.ConsumerGroup && (s.Kind == ScaleGroup || s.Kind == Adopt):
				g.ShardCount, g.ActiveMigration = target, nil
			case s.Kind == Rollback && s.Group == g.ConsumerGroup:
				g.ShardCount, g.ActiveMigration = s.Migration.FromShardCount, nil
			}
		}
		out.Groups = append(out.Groups, g)
	}
	return out
}

func TestRecordChanges(t *testing.T) {
	basis := rec(grp("a", 4), migrating("b", 4, 6, client.MigrationActive), grp("c", 4))
	// c left PREPARING by a scale whose provisioning failed: it keeps 4.
	preparing := rec(grp("a", 4), migrating("b", 4, 6, client.MigrationActive), migrating("c", 4, 2, client.MigrationPreparing))
	type change struct {
		name string
		now  Record
		want string
	}
	cases := []change{
		{"unchanged", basis, ""},
		{"a migration advanced and completed: not a change", rec(grp("a", 4), grp("b", 6), grp("c", 4)), ""},
		{"a count moved", rec(grp("a", 8), migrating("b", 4, 6, client.MigrationActive), grp("c", 4)), `group "a" went from 4 to 8 shards`},
		{"a group appeared and one went", rec(grp("a", 4), migrating("b", 4, 6, client.MigrationActive), grp("d", 4)),
			`group "c" (4 shards) no longer exists; group "d" (4 shards) appeared`},
		{"a migration rolled back", rec(grp("a", 4), grp("b", 4), grp("c", 4)), `group "b": migration reshard-b (4→6 shards, ACTIVE) ended at 4 shards`},
		{"a migration started", rec(migrating("a", 4, 8, client.MigrationActive), migrating("b", 4, 6, client.MigrationActive), grp("c", 4)),
			`group "a" went from 4 to 8 shards (migration reshard-a (4→8 shards, ACTIVE) started)`},
		{"a PREPARING migration started: the count stays, yet it is a change", preparing,
			`group "c" started migration reshard-c (4→2 shards, PREPARING)`},
	}
	// From a basis in which c's migration is PREPARING, which never moves
	// by itself: whatever it did since is another actor's.
	fromPreparing := []change{
		{"a PREPARING migration resumed by another scale", rec(grp("a", 4), migrating("b", 4, 6, client.MigrationActive), grp("c", 2)),
			`group "c": migration reshard-c (4→2 shards, PREPARING) was resumed and completed at 2 shards`},
		{"a PREPARING migration resumed, still under way", rec(grp("a", 4), migrating("b", 4, 6, client.MigrationActive), migrating("c", 4, 2, client.MigrationActive)),
			`group "c": migration reshard-c (4→2 shards, PREPARING) was resumed: now migration reshard-c (4→2 shards, ACTIVE)`},
		{"a PREPARING migration rolled back", rec(grp("a", 4), migrating("b", 4, 6, client.MigrationActive), grp("c", 4)),
			`group "c": migration reshard-c (4→2 shards, PREPARING) ended at 4 shards`},
		{"a PREPARING migration still PREPARING", preparing, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(basis.Changes(tc.now, nil), "; "); got != tc.want {
				t.Errorf("Changes = %q, want %q", got, tc.want)
			}
		})
	}
	for _, tc := range fromPreparing {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(preparing.Changes(tc.now, nil), "; "); got != tc.want {
				t.Errorf("Changes = %q, want %q", got, tc.want)
			}
		})
	}
	// A counts-only record (an earlier build's): b's count is recorded, its
	// migration is not known either way, so only counts and groups count.
	countsOnly := rec(grp("a", 4), grp("b", 6), grp("c", 4))
	countsOnly.CountsOnly = true
	for _, tc := range []change{
		{"counts only: a migration under way at the count recorded", basis, ""},
		{"counts only: a migration started since, at a new count", rec(migrating("a", 4, 8, client.MigrationActive), grp("b", 6), grp("c", 4)),
			`group "a" went from 4 to 8 shards`},
		{"counts only: a group appeared and one went", rec(grp("a", 4), grp("b", 6), grp("d", 4)),
			`group "c" (4 shards) no longer exists; group "d" (4 shards) appeared`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(countsOnly.Changes(tc.now, nil), "; "); got != tc.want {
				t.Errorf("Changes = %q, want %q", got, tc.want)
			}
		})
	}
	ours := func(g string) bool { return g == "c" || g == "d" }
	if got := basis.Changes(rec(grp("a", 4), migrating("b", 4, 6, client.MigrationActive), grp("d", 4)), ours); len(got) != 0 {
		t.Errorf("groups the run creates or deletes are not changes: %q", got)
	}
	// A record of one group is a shard count's basis of its own group: the
	// same rules, whatever the metadataVersion did (the provider checks that).
	followed := migrating("a", 8, 6, client.MigrationActive)
	followed.ActiveMigration.ReshardingID = "reshard-a2"
	for _, tc := range []struct {
		name    string
		was, is client.Group
		want    string
	}{
		{"progressing", migrating("a", 4, 8, client.MigrationActive), migrating("a", 4, 8, client.MigrationDraining), ""},
		{"completed at its target", migrating("a", 4, 8, client.MigrationActive), grp("a", 8), ""},
		{"followed by another", migrating("a", 4, 8, client.MigrationActive), followed,
			`group "a": migration reshard-a (4→8 shards, ACTIVE) was followed by migration reshard-a2 (8→6 shards, ACTIVE)`},
		{"a PREPARING migration resumed: the count switched", migrating("a", 4, 8, client.MigrationPreparing), migrating("a", 4, 8, client.MigrationActive),
			`group "a": migration reshard-a (4→8 shards, PREPARING) was resumed: now migration reshard-a (4→8 shards, ACTIVE)`},
		{"scaled", grp("a", 4), grp("a", 6), `group "a" went from 4 to 6 shards`},
	} {
		if got := strings.Join(rec(tc.was).Changes(rec(tc.is), nil), "; "); got != tc.want {
			t.Errorf("%s: Changes = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRecordSplit(t *testing.T) {
	r := rec(grp("a", 6), grp("b", 4), migrating("c", 4, 6, client.MigrationActive), migrating("d", 4, 6, client.MigrationPreparing))
	var names []string
	for _, g := range r.Split(6) {
		names = append(names, g.ConsumerGroup)
	}
	if got := strings.Join(names, ","); got != "b,d" {
		t.Errorf("Split(6) = %s, want b,d", got)
	}
	// A PREPARING migration elsewhere keeps its group at the old count: a
	// prefix whose groups all have the target is not split (the import of a
	// prefix stuck PREPARING plans nothing at its own count).
	stuck := rec(migrating("a", 2, 4, client.MigrationPreparing), grp("b", 2))
	if got := stuck.Split(2); len(got) != 0 {
		t.Errorf("Split(2) of a prefix at 2 with a PREPARING 2→4 = %+v, want none", got)
	}
	if got := stuck.Split(4); len(got) != 2 {
		t.Errorf("Split(4) of a prefix at 2 with a PREPARING 2→4 = %d groups, want 2", len(got))
	}
}

// The executor's basis rule for every record after the first (review of
// issue 30, finding 1): what moved since, except groups now at the target
// or under way to it.
func TestRecordMoved(t *testing.T) {
	// b's migration elsewhere is what the run waits for before it scales
	// the prefix to 8.
	first := rec(grp("a", 4), migrating("b", 4, 6, client.MigrationActive))
	cases := []struct {
		name string
		now  Record
		want string
	}{
		{"the awaited migration completed", rec(grp("a", 4), grp("b", 6)), ""},
		{"our own scale, read back", rec(migrating("a", 4, 8, client.MigrationActive), migrating("b", 6, 8, client.MigrationPreparing)), ""},
		{"another actor took a group to the target", rec(grp("a", 8), grp("b", 6)), ""},
		{"a group appeared at the target", rec(grp("a", 4), grp("b", 6), grp("c", 8)), `group "c" (8 shards) appeared`},
		{"a group appeared PREPARING to the target", rec(grp("a", 4), grp("b", 6), migrating("c", 4, 8, client.MigrationPreparing)),
			`group "c" (4 shards) appeared`},
		{"our own stream scale failed part-way on a group behind", rec(migrating("a", 4, 8, client.MigrationPreparing), grp("b", 6)), ""},
		{"a group appeared elsewhere", rec(grp("a", 4), grp("b", 6), grp("c", 4)), `group "c" (4 shards) appeared`},
		{"the awaited migration was rolled back", rec(grp("a", 4), grp("b", 4)), `group "b": migration reshard-b (4→6 shards, ACTIVE) ended at 4 shards`},
		{"a group was scaled elsewhere", rec(grp("a", 2), grp("b", 6)), `group "a" went from 4 to 2 shards`},
		{"a migration elsewhere started", rec(migrating("a", 4, 5, client.MigrationActive), grp("b", 6)), `group "a" went from 4 to 5 shards (migration reshard-a (4→5 shards, ACTIVE) started)`},
		{"a group went", rec(grp("b", 6)), `group "a" (4 shards) no longer exists`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(first.Moved(tc.now, 8, nil), "; "); got != tc.want {
				t.Errorf("Moved = %q, want %q", got, tc.want)
			}
		})
	}
	// The awaited group, PREPARING to the target once its migration ended
	// (another actor's scale failed part-way): resuming it is the scale the
	// plan showed for it.
	if got := first.Moved(rec(grp("a", 4), migrating("b", 6, 8, client.MigrationPreparing)), 8, nil); len(got) != 0 {
		t.Errorf("a PREPARING migration to the target of a group the plan scales is not a move: %q", got)
	}
	// A group the record had heading to the target, now PREPARING to it
	// under another migration (rolled back, then scaled again by someone
	// whose provisioning failed): resuming it is no scale the plan showed.
	heading := rec(migrating("a", 4, 8, client.MigrationActive))
	if got := heading.Moved(rec(migrating("a", 4, 8, client.MigrationPreparing)), 8, nil); len(got) != 0 {
		t.Errorf("the same migration, as the record had it, is no move: %q", got)
	}
	other := migrating("a", 4, 8, client.MigrationPreparing)
	other.ActiveMigration.ReshardingID = "reshard-again"
	if got := heading.Moved(rec(other), 8, nil); len(got) == 0 {
		t.Error("another PREPARING migration of a group the record had heading to the target is a move")
	}
	if got := first.Moved(rec(grp("b", 6), grp("c", 4)), 8, func(g string) bool { return g == "a" || g == "c" }); len(got) != 0 {
		t.Errorf("groups the run creates or deletes are not moves: %q", got)
	}
}

func TestDecisionAdoptsOnly(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want bool
	}{
		{"nothing to do", Input{Record: rec(grp("a", 6)), Target: 6}, true},
		{"a sibling under way to the target is taken over", Input{Record: rec(grp("a", 6), migrating("b", 4, 6, client.MigrationActive)), Self: "a", Target: 6}, true},
		{"a sibling behind is scaled", Input{Record: rec(grp("a", 6), grp("b", 4)), Self: "a", Target: 6}, false},
		{"a migration elsewhere is waited for", Input{Record: rec(grp("a", 6), migrating("b", 6, 3, client.MigrationDraining)), Self: "a", Target: 6}, false},
		{"a PREPARING migration elsewhere refuses", Input{Record: rec(grp("a", 6), migrating("b", 6, 8, client.MigrationPreparing)), Self: "a", Target: 6}, false},
	}
	for _, tc := range cases {
		if got := Decide(tc.in).AdoptsOnly(); got != tc.want {
			t.Errorf("%s: AdoptsOnly = %v, want %v (%s)", tc.name, got, tc.want, summary(Decide(tc.in)))
		}
	}
}

func TestKeep(t *testing.T) {
	known := map[string]client.Migration{"b": {ReshardingID: "reshard-old-b", FromShardCount: 6, ToShardCount: 4, State: client.MigrationActive}}
	cases := []struct {
		name string
		in   Input
		want string
		wait bool
	}{
		{"at the count: nothing to do", Input{Record: rec(grp("a", 6), grp("b", 6)), Self: "a", Target: 6}, "done", true},
		{"its own migration under way: a wait", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), migrating("b", 4, 6, client.MigrationDraining)), Self: "a", Target: 6},
			"adopt a; adopt b", true},
		{"a resumed wait's migration that ended away is adopted by the wait", Input{Record: rec(grp("a", 4), grp("b", 6)), Self: "a", Target: 4, Known: known},
			"adopt b", true},
		{"a sibling behind: the repair", Input{Record: rec(migrating("a", 4, 6, client.MigrationActive), grp("b", 4)), Self: "a", Target: 6},
			"adopt a; per-group scale b", false},
		{"a split prefix with nothing under way: one stream scale", Input{Record: rec(grp("a", 6), grp("b", 4)), Self: "a", Target: 6}, "stream scale", false},
		{"a PREPARING migration elsewhere refuses", Input{Record: rec(grp("a", 6), migrating("b", 6, 8, client.MigrationPreparing)), Self: "a", Target: 6},
			"refuse preparing-elsewhere b", false},
	}
	for _, tc := range cases {
		d, wait := Keep(tc.in)
		if got := summary(d); got != tc.want || wait != tc.wait {
			t.Errorf("%s: Keep = %q, wait %v; want %q, wait %v", tc.name, got, wait, tc.want, tc.wait)
		}
	}
}

func TestMovesByItself(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups []client.Group
		want   string
	}{
		{"every group at the target", []client.Group{grp("a", 6), grp("b", 6)}, ""},
		{"a sibling's migration elsewhere", []client.Group{grp("a", 6), migrating("b", 4, 3, client.MigrationDraining)}, "b"},
		{"a sibling PREPARING elsewhere keeps its count", []client.Group{grp("a", 6), migrating("b", 4, 8, client.MigrationPreparing)}, ""},
		{"a sibling PREPARING a scale-out to the target is resumed", []client.Group{grp("a", 6), migrating("b", 4, 6, client.MigrationPreparing)}, "b"},
		{"a sibling below the target", []client.Group{grp("a", 6), grp("b", 2)}, "b"},
		{"its own scale-out from rest: its consumers come and go", []client.Group{grp("a", 4)}, "a"},
		{"its own ACTIVE scale-out", []client.Group{migrating("a", 4, 6, client.MigrationActive)}, "a"},
		{"its own scale-in", []client.Group{migrating("a", 8, 6, client.MigrationDraining)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(MovesByItself(Input{Record: rec(tc.groups...), Self: "a", Target: 6}), ",")
			if got != tc.want {
				t.Fatalf("MovesByItself = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRecordWith(t *testing.T) {
	r := rec(grp("a", 4), grp("c", 4)).With(grp("b", 6)).With(grp("a", 2))
	if got := r.String(); got != `"a" 2, "b" 6, "c" 4` {
		t.Fatalf("With = %s", got)
	}
}
