package prefix

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Input is what a decision is made from.
type Input struct {
	Record Record
	// Self is the group the shard count resource addresses.
	Self   string
	Target int32
	// RollbackOnRevert allows rolling back ACTIVE migrations that started at the target.
	RollbackOnRevert bool
	// WaitOnly: the plan sends nothing, so any step that sends is a stale plan.
	WaitOnly bool
	// Known are migrations to the target this run knows were under way. A group
	// now at the target with none under way finished its known one and is adopted,
	// so the wait reads its final state.
	Known map[string]client.Migration
	// TakeOver: after this run's stream scale landed or was refused, groups are
	// brought to the target one by one; waiting or rolling back is refused instead.
	TakeOver bool
	// Waited: the executor already waited once; a second wait is refused.
	Waited bool
}

// StepKind is one thing an executor does.
type StepKind int

const (
	// StreamScale scales every group of the prefix; only with nothing under way.
	StreamScale StepKind = iota
	// ScaleGroup scales one group left behind, or resumes its PREPARING migration.
	ScaleGroup
	// Adopt waits for Group's Migration, already heading to the target.
	Adopt
	// Rollback rolls back Group's ACTIVE Migration (rollback_on_revert).
	Rollback
	// WaitOthers waits for migrations heading elsewhere, then decides again.
	WaitOthers
)

func (k StepKind) String() string {
	return [...]string{"stream scale", "per-group scale", "adopt", "rollback", "wait for other migrations"}[k]
}

// Step is one ordered step of a decision.
type Step struct {
	Kind      StepKind
	Group     string            // ScaleGroup, Adopt, Rollback
	Migration *client.Migration // Adopt, Rollback; ScaleGroup with Resume
	Resume    bool              // ScaleGroup of a PREPARING migration to the target
	Blocking  []client.Group    // WaitOthers: the groups whose migrations head elsewhere
}

// Sends reports a step that sends a mutation.
func (s Step) Sends() bool {
	return s.Kind == StreamScale || s.Kind == ScaleGroup || s.Kind == Rollback
}

// RefusalKind says why nothing may be sent.
type RefusalKind int

const (
	// PreparingElsewhere: a PREPARING migration to another count blocks every
	// scale of the prefix but one to its own target (CONTRACT §4.6).
	PreparingElsewhere RefusalKind = iota + 1
	// RevertRefused: migrations started at the target head elsewhere and cannot
	// be rolled back.
	RevertRefused
	// WaitOnlyStale: the plan sends nothing, and a group is not where waiting brings it.
	WaitOnlyStale
	// StalledElsewhere: the wait would be for a scale-out with no live consumer,
	// which stays ACTIVE until one joins.
	StalledElsewhere
	// BlockedElsewhere: scaling the other groups before migrations heading
	// elsewhere would leave the prefix at two counts.
	BlockedElsewhere
)

// Refusal is a decision to send nothing; Groups are the groups it names.
type Refusal struct {
	Kind   RefusalKind
	Groups []client.Group
}

// Decision is the ordered steps, or a refusal; neither means nothing to do.
type Decision struct {
	Steps   []Step
	Refusal *Refusal
	// Revert: the steps roll the prefix back to the target.
	Revert bool
	// NoConsumer are groups reaching the target by a scale-out with no live
	// consumer: their migrations do not complete by themselves.
	NoConsumer []string
}

// Done reports a decision with nothing to do.
func (d Decision) Done() bool { return d.Refusal == nil && len(d.Steps) == 0 }

// AdoptsOnly reports a decision that sends nothing and waits for nothing
// heading elsewhere.
func (d Decision) AdoptsOnly() bool {
	if d.Refusal != nil {
		return false
	}
	for _, s := range d.Steps {
		if s.Kind != Adopt {
			return false
		}
	}
	return true
}

// Sends reports whether any step sends a mutation.
func (d Decision) Sends() bool {
	for _, s := range d.Steps {
		if s.Sends() {
			return true
		}
	}
	return false
}

// Decide is the one rule for bringing a stream prefix to a shard count; it
// is pure. In order:
//  1. a PREPARING migration to another count refuses everything (only its
//     own target moves it);
//  2. a migration that started at the target and heads elsewhere makes a
//     revert: those heading away are rolled back (all ACTIVE, and
//     rollback_on_revert set, else refused), the rest as in 5;
//  3. migrations heading elsewhere are waited for once, then decided again;
//     a stalled one (no consumer), a take-over or a second wait refuses;
//  4. with nothing under way, one stream scale (a noop for groups there);
//  5. with migrations under way to the target, each is adopted (a PREPARING
//     one resumed) and each group behind gets a per-group scale, since a
//     stream scale is refused (409) while anything is under way.
func Decide(in Input) Decision {
	d := decide(in)
	if d.Refusal != nil {
		return d
	}
	for _, g := range in.Record.Groups {
		if waitsForConsumer(&g, in.Target) {
			d.NoConsumer = append(d.NoConsumer, g.ConsumerGroup)
		}
	}
	return d
}

// Keep is the decision for a count the configuration already has: a wait when
// waiting brings the prefix there, else a repair or its refusal.
func Keep(in Input) (d Decision, wait bool) {
	in.WaitOnly = true
	if d = Decide(in); d.Refusal == nil || d.Refusal.Kind != WaitOnlyStale {
		return d, d.Refusal == nil
	}
	in.WaitOnly, in.Known = false, nil
	return Decide(in), false
}

func waitsForConsumer(g *client.Group, target int32) bool {
	if g.State != client.GroupEmpty {
		return false
	}
	am := Unfinished(g)
	switch {
	case am == nil:
		return g.ShardCount < target
	case am.ToShardCount == target:
		return am.ToShardCount > am.FromShardCount && am.State != client.MigrationDraining
	case am.FromShardCount == target:
		return false // rolled back to the target
	}
	// Waited for, then scaled out from where it ends.
	return am.ToShardCount < target
}

func decide(in Input) Decision {
	r, target := in.Record, in.Target
	var active []client.Group
	for _, g := range r.Groups {
		if Unfinished(&g) != nil {
			active = append(active, g)
		}
	}
	for _, g := range active {
		if am := g.ActiveMigration; am.State == client.MigrationPreparing && am.ToShardCount != target {
			return refuse(PreparingElsewhere, g)
		}
	}
	reverting := false
	for _, g := range active {
		if am := g.ActiveMigration; am.FromShardCount == target && am.ToShardCount != target {
			reverting = true
		}
	}
	if reverting {
		return decideRevert(in, active)
	}
	var elsewhere []client.Group
	for _, g := range active {
		if g.ActiveMigration.ToShardCount != target {
			elsewhere = append(elsewhere, g)
		}
	}
	if len(elsewhere) > 0 {
		if in.WaitOnly {
			return refuse(WaitOnlyStale, elsewhere[0])
		}
		var stalled []client.Group
		for _, g := range elsewhere {
			if Stalled(&g) {
				stalled = append(stalled, g)
			}
		}
		if len(stalled) > 0 {
			return Decision{Refusal: &Refusal{Kind: StalledElsewhere, Groups: stalled}}
		}
		if in.TakeOver || in.Waited {
			return Decision{Refusal: &Refusal{Kind: BlockedElsewhere, Groups: elsewhere}}
		}
		return Decision{Steps: []Step{{Kind: WaitOthers, Blocking: elsewhere}}}
	}
	var d Decision
	var behind []client.Group
	for _, g := range r.Groups {
		am := Unfinished(&g)
		known, isKnown := in.Known[g.ConsumerGroup]
		switch {
		case am != nil && am.State == client.MigrationPreparing:
			d.Steps = append(d.Steps, Step{Kind: ScaleGroup, Group: g.ConsumerGroup, Migration: am, Resume: true})
			behind = append(behind, g)
		case am != nil:
			d.Steps = append(d.Steps, Step{Kind: Adopt, Group: g.ConsumerGroup, Migration: am})
		// A known migration no longer under way ended: at the target, it is
		// adopted so the wait reads its end; a wait-only plan adopts it
		// wherever it ended (rolled back), and the wait reports that.
		case isKnown && (g.ShardCount == target || in.WaitOnly):
			d.Steps = append(d.Steps, Step{Kind: Adopt, Group: g.ConsumerGroup, Migration: &known})
		case g.ShardCount != target:
			d.Steps = append(d.Steps, Step{Kind: ScaleGroup, Group: g.ConsumerGroup})
			behind = append(behind, g)
		}
	}
	if len(active) == 0 && len(behind) > 0 && !in.TakeOver {
		// The coordinator answers a noop for groups already at the target.
		steps := []Step{{Kind: StreamScale}}
		for _, s := range d.Steps {
			if s.Kind == Adopt {
				steps = append(steps, s)
			}
		}
		d.Steps = steps
	}
	if in.WaitOnly && len(behind) > 0 {
		return refuse(WaitOnlyStale, behind[0])
	}
	return d
}

// Stalled reports an ACTIVE scale-out of a group with no live consumer: the
// coordinator reports EMPTY exactly when it has no live member.
func Stalled(g *client.Group) bool {
	am := Unfinished(g)
	return am != nil && am.State == client.MigrationActive && am.ToShardCount > am.FromShardCount && g.State == client.GroupEmpty
}

func decideRevert(in Input, active []client.Group) Decision {
	if in.WaitOnly {
		return refuse(WaitOnlyStale, active[0])
	}
	// A rollback concerns its own group only.
	var away []client.Group
	refused := false
	for _, g := range active {
		am := g.ActiveMigration
		switch {
		case am.ToShardCount == in.Target:
			continue
		case !in.RollbackOnRevert || am.State != client.MigrationActive || am.FromShardCount != in.Target:
			refused = true
		}
		away = append(away, g)
	}
	if refused {
		return Decision{Refusal: &Refusal{Kind: RevertRefused, Groups: away}}
	}
	if in.TakeOver {
		return Decision{Refusal: &Refusal{Kind: BlockedElsewhere, Groups: away}}
	}
	// A resume first: failing again it leaves the prefix as it was, where a
	// rollback already done would have stranded entries.
	d := Decision{Revert: true}
	for _, g := range active {
		if am := g.ActiveMigration; am.ToShardCount == in.Target && am.State == client.MigrationPreparing {
			d.Steps = append(d.Steps, Step{Kind: ScaleGroup, Group: g.ConsumerGroup, Migration: am, Resume: true})
		}
	}
	for _, g := range away {
		d.Steps = append(d.Steps, Step{Kind: Rollback, Group: g.ConsumerGroup, Migration: g.ActiveMigration})
	}
	for _, g := range active {
		if am := g.ActiveMigration; am.ToShardCount == in.Target && am.State != client.MigrationPreparing {
			d.Steps = append(d.Steps, Step{Kind: Adopt, Group: g.ConsumerGroup, Migration: am})
		}
	}
	for _, g := range in.Record.Groups {
		if g.ShardCount != in.Target && Unfinished(&g) == nil {
			d.Steps = append(d.Steps, Step{Kind: ScaleGroup, Group: g.ConsumerGroup})
		}
	}
	return d
}

// ResumedWait is Input.Known for a wait-only decision that resumes an
// unfinished wait (resumed: group → migration id): a group of it now away
// from the target with nothing under way ended its migration elsewhere; the
// stand-in ACTIVE migration makes the wait adopt it and read how it ended.
func ResumedWait(rec Record, target int32, resumed map[string]string) map[string]client.Migration {
	known := map[string]client.Migration{}
	for name, id := range resumed {
		if g := rec.Group(name); g != nil && g.ShardCount != target && Unfinished(g) == nil {
			known[name] = client.Migration{ReshardingID: id, ToShardCount: target, FromShardCount: g.ShardCount, State: client.MigrationActive}
		}
	}
	return known
}

func refuse(k RefusalKind, g client.Group) Decision {
	return Decision{Refusal: &Refusal{Kind: k, Groups: []client.Group{g}}}
}

// MovesByItself names the groups whose migration or liveness may change
// between a plan of in and its apply without making the plan stale: a
// sibling's migration under way (a PREPARING one only when resumed as a
// scale-out), any group at rest below the target (whether a scale-out
// completes by itself depends on a live consumer, which joins or leaves at
// any time), and Self's ACTIVE scale-out. What a decision tells of them is
// known only at apply.
func MovesByItself(in Input) []string {
	var names []string
	for _, g := range in.Record.Groups {
		am := g.ActiveMigration
		own := g.ConsumerGroup == in.Self
		resumed := !am.Finished() && am.ToShardCount == in.Target && am.ToShardCount > am.FromShardCount
		switch {
		case own && !am.Finished() && am.State == client.MigrationActive && am.ToShardCount > am.FromShardCount,
			!own && !am.Finished() && (am.State != client.MigrationPreparing || resumed),
			am.Finished() && g.ShardCount < in.Target:
			names = append(names, g.ConsumerGroup)
		}
	}
	return names
}

// Record is one reading of every group of a stream prefix, in name order.
type Record struct {
	Prefix string
	Groups []client.Group
	// CountsOnly: the record holds counts but not migrations, so Changes
	// compares counts only.
	CountsOnly bool
}

// FromListing keeps the groups of prefix p from a listing of every group.
func FromListing(all []client.Group, p string) Record {
	r := Record{Prefix: p}
	for _, g := range all {
		if g.StreamPrefix == p {
			r.Groups = append(r.Groups, g)
		}
	}
	sort.Slice(r.Groups, func(i, j int) bool { return r.Groups[i].ConsumerGroup < r.Groups[j].ConsumerGroup })
	return r
}

// Group returns the record of group g, nil when the prefix has none.
func (r Record) Group(g string) *client.Group {
	for i := range r.Groups {
		if r.Groups[i].ConsumerGroup == g {
			return &r.Groups[i]
		}
	}
	return nil
}

// Counts maps every group to its shard count.
func (r Record) Counts() map[string]int32 {
	out := make(map[string]int32, len(r.Groups))
	for _, g := range r.Groups {
		out[g.ConsumerGroup] = g.ShardCount
	}
	return out
}

// With is r with g in place of the group of its name, or added.
func (r Record) With(g client.Group) Record {
	return FromListing(append(r.Without(g.ConsumerGroup).Groups, g), r.Prefix)
}

// Without leaves the named groups out.
func (r Record) Without(names ...string) Record {
	out := Record{Prefix: r.Prefix}
	for _, g := range r.Groups {
		if !slices.Contains(names, g.ConsumerGroup) {
			out.Groups = append(out.Groups, g)
		}
	}
	return out
}

// Unfinished is group g's migration while it is under way, or nil.
func Unfinished(g *client.Group) *client.Migration {
	if g == nil || g.ActiveMigration.Finished() {
		return nil
	}
	return g.ActiveMigration
}

// AtTarget reports a group that is at the target with nothing under way.
func AtTarget(g client.Group, target int32) bool {
	return g.ShardCount == target && g.ActiveMigration.Finished()
}

// Split lists the groups neither at the target nor under way to it: producers
// routing by one group's count would write to shards another never reads. A
// PREPARING migration keeps the old count and never moves by itself, so a
// group at the target with one elsewhere is at the target.
func (r Record) Split(target int32) []client.Group {
	var out []client.Group
	for _, g := range r.Groups {
		am := Unfinished(&g)
		if g.ShardCount == target && (am == nil || am.State == client.MigrationPreparing) {
			continue
		}
		if am != nil && am.ToShardCount == target && am.State != client.MigrationPreparing {
			continue
		}
		out = append(out, g)
	}
	return out
}

// Changes lists how now differs from the record, leaving out the groups ours
// names. A migration that advances or completes at its target moves by itself
// and is no change; a resumed PREPARING one is.
func (r Record) Changes(now Record, ours func(g string) bool) []string {
	if ours == nil {
		ours = func(string) bool { return false }
	}
	var out []string
	for _, was := range r.Groups {
		name := was.ConsumerGroup
		if ours(name) {
			continue
		}
		is := now.Group(name)
		if is == nil {
			out = append(out, fmt.Sprintf("group %q (%d shards) no longer exists", name, was.ShardCount))
			continue
		}
		wasM, isM := Unfinished(&was), Unfinished(is)
		switch {
		case r.CountsOnly:
			if was.ShardCount != is.ShardCount {
				out = append(out, fmt.Sprintf("group %q went from %d to %d shards", name, was.ShardCount, is.ShardCount))
			}
		case wasM == nil && isM == nil && was.ShardCount != is.ShardCount:
			out = append(out, fmt.Sprintf("group %q went from %d to %d shards", name, was.ShardCount, is.ShardCount))
		case wasM == nil && isM != nil && was.ShardCount != is.ShardCount:
			out = append(out, fmt.Sprintf("group %q went from %d to %d shards (%s started)", name, was.ShardCount, is.ShardCount, Describe(isM)))
		case wasM == nil && isM != nil:
			// PREPARING keeps the old count, yet the next scale resumes it.
			out = append(out, fmt.Sprintf("group %q started %s", name, Describe(isM)))
		case wasM != nil && isM != nil && isM.ReshardingID != wasM.ReshardingID:
			out = append(out, fmt.Sprintf("group %q: %s was followed by %s", name, Describe(wasM), Describe(isM)))
		case wasM != nil && isM == nil && is.ShardCount != wasM.ToShardCount:
			out = append(out, fmt.Sprintf("group %q: %s ended at %d shards", name, Describe(wasM), is.ShardCount))
		case wasM != nil && wasM.State == client.MigrationPreparing && isM != nil && isM.State != client.MigrationPreparing:
			// PREPARING never moves by itself: a scale to its target resumed it.
			out = append(out, fmt.Sprintf("group %q: %s was resumed: now %s", name, Describe(wasM), Describe(isM)))
		case wasM != nil && wasM.State == client.MigrationPreparing && isM == nil:
			out = append(out, fmt.Sprintf("group %q: %s was resumed and completed at %d shards", name, Describe(wasM), is.ShardCount))
		}
	}
	for _, is := range now.Groups {
		if !ours(is.ConsumerGroup) && r.Group(is.ConsumerGroup) == nil {
			out = append(out, fmt.Sprintf("group %q (%d shards) appeared", is.ConsumerGroup, is.ShardCount))
		}
	}
	sort.Strings(out)
	return out
}

// Moved lists the Changes that a change to target did not bring about. It is
// the executor's basis rule for every record after the first, so a later
// reading sends no more than the plan showed.
func (r Record) Moved(now Record, target int32, ours func(g string) bool) []string {
	if ours == nil {
		ours = func(string) bool { return false }
	}
	towards := func(g string) bool {
		if ours(g) {
			return true
		}
		was, is := r.Group(g), now.Group(g)
		if was == nil || is == nil {
			return false
		}
		am := Unfinished(is)
		switch {
		case am == nil:
			return is.ShardCount == target
		case am.ToShardCount != target:
			return false
		case am.State == client.MigrationPreparing:
			wasM := Unfinished(was)
			return !AtTarget(*was, target) && (wasM == nil || wasM.ToShardCount != target)
		}
		return true
	}
	return r.Changes(now, towards)
}

// Describe names a migration for a diagnostic.
func Describe(m *client.Migration) string {
	return fmt.Sprintf("migration %s (%d→%d shards, %s)", m.ReshardingID, m.FromShardCount, m.ToShardCount, m.State)
}

// String lists the groups with their counts, for diagnostics and logs.
func (r Record) String() string {
	if len(r.Groups) == 0 {
		return "no groups"
	}
	parts := make([]string, len(r.Groups))
	for i, g := range r.Groups {
		parts[i] = fmt.Sprintf("%q %d", g.ConsumerGroup, g.ShardCount)
		if am := Unfinished(&g); am != nil {
			parts[i] += fmt.Sprintf(" (%s %d→%d)", am.State, am.FromShardCount, am.ToShardCount)
		}
	}
	return strings.Join(parts, ", ")
}

// Scale is a step of a run's executor that takes a prefix to Target. The run
// journals its steps per prefix under the prefix lock before each send, so
// other resources of the run can tell its own changes from a stale plan. A
// step whose send was refused before any change is struck out; others stay,
// since a lost answer may have landed.
type Scale struct {
	Target int32
	// Planned is the groups' counts as the plan showed them; nil when it could not.
	Planned map[string]int64
}

// Scales is what a run journaled for one prefix, in order.
type Scales []Scale

// Explains reports that a step took group n from was to now.
func (ss Scales) Explains(n string, was, now int64) bool {
	for _, st := range ss {
		if c, ok := st.Planned[n]; int64(st.Target) == now && (st.Planned == nil || ok && c == was) {
			return true
		}
	}
	return false
}

// AsPlanned is grp as the plan of the last step that showed it saw it.
func (ss Scales) AsPlanned(grp client.Group) client.Group {
	for i := len(ss) - 1; i >= 0; i-- {
		was, ok := ss[i].Planned[grp.ConsumerGroup]
		if !ok {
			continue
		}
		if am := grp.ActiveMigration; grp.ShardCount == ss[i].Target || (!am.Finished() && am.ToShardCount == ss[i].Target) {
			grp.ShardCount = int32(was)
		}
		break
	}
	return grp
}
