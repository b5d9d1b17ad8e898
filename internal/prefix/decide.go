package prefix

import "github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"

// Input is what a decision is made from: the prefix as read (the record),
// the target, and what the run itself does to the prefix.
type Input struct {
	Record Record
	// Self is the group the shard count resource addresses.
	Self   string
	Target int32
	// RollbackOnRevert allows rolling back ACTIVE migrations that started
	// at the target.
	RollbackOnRevert bool
	// WaitOnly: the plan said it sends nothing (it waits for a migration
	// under way, or resumes an unfinished wait). Any step that sends is
	// refused as a stale plan.
	WaitOnly bool
	// Known are migrations to the target this run knows were under way (a
	// resumed wait's, or the ones a lost scale's read-back found). A group
	// with none under way now that is at the target finished its known one
	// in between: it is adopted, so the wait reads its final state and state
	// records it. In a wait-only plan a group's known migration is adopted
	// whatever its count: the wait reports how it ended (rolled back), which
	// also ends the wait the plan resumed. Otherwise a group away from the
	// target is behind, like any other.
	Known map[string]client.Migration
	// TakeOver: the decision brings the groups to the target group by
	// group, under the prefix lock, after this run's stream scale landed
	// or was refused (409): it sends no stream scale (a group behind gets
	// a per-group scale), and where it would wait for migrations heading
	// elsewhere, or roll them back, it refuses (BlockedElsewhere).
	TakeOver bool
	// Waited: the executor already waited once for the migrations heading
	// elsewhere; where it would wait again, it refuses (BlockedElsewhere).
	Waited bool
}

// StepKind is one thing an executor does.
type StepKind int

const (
	// StreamScale is POST /streams/{p}/scale to the target: every group of
	// the prefix (a noop for those already there). Only without any
	// migration under way (CONTRACT §4.6 pre-check).
	StreamScale StepKind = iota
	// ScaleGroup is POST /streams/{p}/groups/{g}/scale to the target: a
	// group left behind while others are under way, or one whose PREPARING
	// migration to the target it resumes (Resume).
	ScaleGroup
	// Adopt waits for Group's Migration, already heading to the target.
	Adopt
	// Rollback rolls back Group's ACTIVE Migration (rollback_on_revert).
	Rollback
	// WaitOthers waits for the migrations heading elsewhere (its
	// Blocking groups), then decides again from a fresh record.
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
	// PreparingElsewhere: a PREPARING migration to another count blocks
	// every scale of the prefix but one to its own target (CONTRACT §4.6).
	PreparingElsewhere RefusalKind = iota + 1
	// RevertRefused: migrations started at the target head elsewhere, and
	// rolling them back is not allowed (rollback_on_revert unset) or not
	// possible (one is no longer ACTIVE).
	RevertRefused
	// WaitOnlyStale: the plan sends nothing, and a group is not where
	// waiting brings it.
	WaitOnlyStale
	// StalledElsewhere: a migration heading elsewhere, which the change
	// would wait for, is a scale-out whose group has no live consumer: it
	// stays ACTIVE until one joins, so the wait could only time out.
	StalledElsewhere
	// BlockedElsewhere: migrations heading elsewhere (Groups) stop a
	// take-over, or a change that already waited for them once (the
	// executor's); scaling the other groups before them would leave the
	// prefix at two counts.
	BlockedElsewhere
)

// Refusal is a decision to send nothing; Groups are the groups it names.
type Refusal struct {
	Kind   RefusalKind
	Groups []client.Group
}

// Decision is the ordered steps, or a refusal. Empty steps and no refusal:
// every group is at the target with nothing under way.
type Decision struct {
	Steps   []Step
	Refusal *Refusal
	// Revert: the steps roll the prefix back to the target.
	Revert bool
	// NoConsumer are the groups with no live consumer that the change
	// brings to the target by a scale-out (waitsForConsumer), now or once
	// what it waits for is done: their migrations stay ACTIVE until a
	// consumer joins, so it does not complete by itself (the plan's
	// preview says so).
	NoConsumer []string
}

// Done reports a decision with nothing to do.
func (d Decision) Done() bool { return d.Refusal == nil && len(d.Steps) == 0 }

// AdoptsOnly reports a decision that only takes over migrations already
// heading to the target, or has nothing to do: it sends nothing and waits
// for nothing heading elsewhere.
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

// Decide is the one rule for bringing a stream prefix to a shard count. It
// is pure: the record in, the steps out.
//
//  1. A PREPARING migration to another count refuses everything: only its
//     own target moves it.
//  2. A migration that started at the target and heads elsewhere makes the
//     change a revert: every migration heading away from the target is
//     rolled back (all must be ACTIVE and from the target, and
//     rollback_on_revert set, else the revert is refused, naming them),
//     one heading to the target is taken over (resumed if PREPARING), then every
//     group at another count with nothing under way (one this apply
//     created at the count the plan saw, or a split prefix's) is scaled to
//     the target one by one.
//  3. Migrations heading elsewhere (and not from the target) are waited
//     for; the decision is then made again from a fresh record. One that
//     is stalled (a scale-out with no live consumer) refuses: the wait
//     would not end. A take-over (Input.TakeOver) refuses instead of a
//     wait, or of a revert's rollbacks, and so does a change that already
//     waited once (Input.Waited) instead of a second wait
//     (BlockedElsewhere).
//  4. With nothing under way, one stream scale brings every group there
//     (the coordinator answers a noop for groups at the target); with every
//     group at the target there is nothing to do.
//  5. With migrations under way to the target, each is adopted, a PREPARING
//     one is resumed with a per-group scale to the same target, and every
//     group left behind (a split prefix) gets a per-group scale: a stream
//     scale would be refused (409) while any migration is under way. A known
//     migration (Input.Known) of a group with none under way is adopted. A
//     take-over scales the groups behind one by one even with nothing
//     under way.
//
// NoConsumer names the groups the decision leaves waiting for a consumer.
//
// A wait-only plan refuses any decision that sends (WaitOnlyStale).
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

// Keep is the decision for a count the configuration already has (a plan
// that keeps it): a wait (Input.WaitOnly, with Known) when waiting brings the
// prefix there (wait), else the decision that repairs it, or its refusal.
func Keep(in Input) (d Decision, wait bool) {
	in.WaitOnly = true
	if d = Decide(in); d.Refusal == nil || d.Refusal.Kind != WaitOnlyStale {
		return d, d.Refusal == nil
	}
	in.WaitOnly, in.Known = false, nil
	return Decide(in), false
}

// waitsForConsumer reports a group with no live consumer that reaches the
// target by a scale-out: scaled out from below it (now, or once the
// migration elsewhere it waits for ends below it), or with a scale-out to
// it under way (taken over, or resumed from PREPARING). Its migration stays
// ACTIVE until a consumer joins.
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
	// Waited for, then scaled from where it ends.
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
		case isKnown && (g.ShardCount == target || in.WaitOnly):
			d.Steps = append(d.Steps, Step{Kind: Adopt, Group: g.ConsumerGroup, Migration: &known})
		case g.ShardCount != target:
			d.Steps = append(d.Steps, Step{Kind: ScaleGroup, Group: g.ConsumerGroup})
			behind = append(behind, g)
		}
	}
	if len(active) == 0 && len(behind) > 0 && !in.TakeOver {
		// One stream scale instead of per-group scales: the coordinator
		// allows it with nothing under way, and answers a noop for the
		// groups already at the target.
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

// Stalled reports a migration under way that no one's waiting ends: a
// scale-out (ACTIVE) of a group with no live consumer, which the
// coordinator reports EMPTY exactly when it has no live member.
func Stalled(g *client.Group) bool {
	am := Unfinished(g)
	return am != nil && am.State == client.MigrationActive && am.ToShardCount > am.FromShardCount && g.State == client.GroupEmpty
}

func decideRevert(in Input, active []client.Group) Decision {
	if in.WaitOnly {
		return refuse(WaitOnlyStale, active[0])
	}
	// The migrations reverted are those heading away from the target; one
	// heading to it is taken over (a PREPARING one resumed), as outside a
	// revert: a rollback concerns its own group only (CONTRACT §4.8).
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
	// A resume first: it is the step that failed before (provisioning),
	// and failing again it leaves the prefix as it was, where a rollback
	// already done would have stranded entries.
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
// unfinished wait (resumed: group → migration id): a group of the wait now
// away from the target with nothing under way ended its migration
// elsewhere (rolled back), and the wait adopts it to report how it ended.
// The plan of the wait and its apply both take Known from here.
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
