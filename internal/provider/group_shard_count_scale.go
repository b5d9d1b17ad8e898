package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// scaler brings every group of a stream prefix to one target shard count,
// starting a stream-level scale or taking over migrations already under way.
type scaler struct {
	api              *client.Client
	locks            *keyedMutex
	p, g             string
	target           int32
	rollbackOnRevert bool
	// mutation carries requestedBy and reason; the client gives each call its
	// own request id, kept across that call's retries.
	mutation client.Mutation
	diags    *diag.Diagnostics
	// checkBasis, when set, runs on the group as read before any mutation;
	// false stops the apply (a saved plan whose basis changed).
	checkBasis func(ctx context.Context, group *client.Group) bool
	// waitOnly: the plan only waits for a migration under way (or resumes an
	// unfinished wait) and said it sends no scale; nothing is sent, and a
	// group that would need one stops the apply.
	waitOnly bool
	// resumed are the migrations (group → id) of the unfinished wait a
	// wait-only apply resumes.
	resumed map[string]string
	// self is the group as last read.
	self *client.Group
	// pace bounds the reads its waits send for the prefix, and gives them
	// their clock (see pacer).
	pace *pacer
	// plans, when set, is the run's registry: a group this run deleted is
	// no longer waited for.
	plans *planRegistry
	// run, when set, is the run's journal (prefix.Run): every step is
	// journaled there, under the prefix lock, before it is sent (note),
	// with planned: the prefix's groups as the plan showed them.
	run     *prefix.Run
	planned map[string]int64
	watch   *runWatcher // the run's one poll of every wait (group_shard_count_wait.go)
	// basis is the prefix as start read it, for the basis check and the
	// first decision (one listing for both); nil once decided from.
	basis *prefix.Record
	// first is that record once the plan's basis check (checkPlanBasis)
	// passed on it: every record read after it is compared with it before
	// anything is sent from it (basisHolds). The plan's check covers the
	// siblings only when the plan listed them (resharding.affected_groups);
	// first then holds the executor to the prefix as the apply found it.
	// nil without a basis check (a created group brought to its prefix's
	// count).
	first *prefix.Record
	// landed: a read-back found the stream scale whose answer was lost
	// applied (what it found, for basisHolds' diagnostic).
	landed []string
	// before is the prefix as read right before a stream scale: its
	// read-back after a lost answer compares the groups with it.
	before *prefix.Record
	// redecided: a stream scale refused (409 ACTIVE_MIGRATION_EXISTS) was
	// decided again from a fresh record; a second refusal goes to the
	// take-over, which refuses migrations heading elsewhere.
	redecided bool
}

// note journals a step of this run's change of the prefix (prefix.Run)
// before it is sent; the caller holds the prefix lock. Each kind of step
// is journaled in one place: the send functions (scaleStream, scaleGroup,
// rollback) and, for a migration adopted without a send, the take-over. A
// refusal before any step leaves nothing journaled.
func (s *scaler) note(kind prefix.StepKind, group, requestID string) {
	if s.run != nil {
		s.run.Note(s.p, prefix.Entry{Kind: kind, Group: group, Target: s.target, Planned: s.planned, RequestID: requestID})
	}
}

// strike takes back the step just journaled: its send was proved not to
// have reached the coordinator.
func (s *scaler) strike() {
	if s.run != nil {
		s.run.Strike(s.p)
	}
}

// deletedInRun reports a group of the prefix this run deleted (a
// replacement's delete, or a destroy, in the same apply).
func (s *scaler) deletedInRun(g string) bool {
	return s.plans != nil && s.plans.deletedInRun(s.p, g)
}

// scaleOutcome is what the scaler started or adopted: one migration per
// affected group (noop migrations are left out).
type scaleOutcome struct {
	previous   *int32
	migrations map[string]client.Migration
	state      client.MigrationState
	// waitingForConsumer marks scale-outs that cannot finish: no live member.
	waitingForConsumer map[string]bool
}

func newScaleOutcome() *scaleOutcome {
	return &scaleOutcome{migrations: map[string]client.Migration{}, waitingForConsumer: map[string]bool{}}
}

func (o *scaleOutcome) changed() bool { return len(o.migrations) > 0 }

func (o *scaleOutcome) track(group string, m client.Migration) {
	if m.ReshardingID == "" || m.ReshardingID == client.NoopReshardingID {
		return
	}
	o.migrations[group] = m
	if o.previous == nil {
		from := m.FromShardCount
		o.previous = &from
	}
	o.state = aggregateState(o.migrations)
}

var migrationProgress = map[client.MigrationState]int{
	client.MigrationPreparing: 0, client.MigrationActive: 1, client.MigrationDraining: 2, client.MigrationDeprecated: 3,
}

// aggregateState is the least advanced state among the migrations; a
// rollback anywhere dominates.
func aggregateState(ms map[string]client.Migration) client.MigrationState {
	var agg client.MigrationState
	for _, m := range ms {
		if m.State == client.MigrationRolledBack || m.State == client.MigrationRollingBack {
			return client.MigrationRolledBack
		}
		if agg == "" || migrationProgress[m.State] < migrationProgress[agg] {
			agg = m.State
		}
	}
	return agg
}

func (o *scaleOutcome) migrationIDsValue() types.Map {
	ids := map[string]string{}
	for g, m := range o.migrations {
		ids[g] = m.ReshardingID
	}
	v, _ := types.MapValueFrom(context.Background(), types.StringType, ids)
	return v
}

func (o *scaleOutcome) stateValue() types.String {
	if o.state == "" {
		return types.StringNull()
	}
	return types.StringValue(string(o.state))
}

func (o *scaleOutcome) previousValue() types.Int64 {
	if o.previous == nil {
		return types.Int64Null()
	}
	return types.Int64Value(int64(*o.previous))
}

// start carries out the change: it reads the group (the basis check runs
// on it), then decides from the prefix and runs the steps (execute). It
// returns nil after adding an error diagnostic.
func (s *scaler) start(ctx context.Context) *scaleOutcome {
	rec, ok := s.record(ctx)
	if !ok {
		return nil
	}
	s.basis = &rec
	group := rec.Group(s.g)
	if group == nil {
		if rec, group, ok = s.confirmMissing(ctx); !ok {
			return nil
		}
		s.basis = &rec
	}
	s.self = group
	if s.checkBasis != nil {
		if !s.checkBasis(ctx, group) {
			return nil
		}
		s.first = &rec
	}
	return s.execute(ctx)
}

// confirmMissing runs when the prefix's listing (a 200) lacks the group:
// the group's own GET confirms it, so the error reports a coordinator
// answer (its errorCode, message and request id) rather than an absence,
// and a group created since the listing is read again instead of refused.
// ok is false after adding an error diagnostic.
func (s *scaler) confirmMissing(ctx context.Context) (prefix.Record, *client.Group, bool) {
	const next = "A shard count can only be set on an existing group. If the group existed when Terraform planned, it was deleted since " +
		"(outside this apply): run terraform plan again, which plans what is missing. If this configuration does not create the group, " +
		"create it with redisstreamcoordinator_group and reference that resource's attributes here, so Terraform creates the group first."
	_, err := s.api.GetGroup(ctx, s.p, s.g)
	switch {
	case client.IsNotFound(err):
		addAPIError(s.diags, fmt.Sprintf("Group %q under stream prefix %q does not exist", s.g, s.p), err, next)
		return prefix.Record{}, nil, false
	case err != nil:
		addAPIError(s.diags, fmt.Sprintf("Group %q under stream prefix %q is missing from the coordinator's group listing, and reading it failed", s.g, s.p), err,
			"The listing (GET /coord/v1/monitoring/groups) answered without the group; its own GET, sent to confirm, failed as above. "+next)
		return prefix.Record{}, nil, false
	}
	// The group exists after all: the listing was taken before it was
	// created. Read the prefix again, so the basis check and the decision
	// see the group with its siblings.
	rec, ok := s.record(ctx)
	if !ok {
		return prefix.Record{}, nil, false
	}
	if group := rec.Group(s.g); group != nil {
		return rec, group, true
	}
	s.diags.AddError(fmt.Sprintf("Group %q under stream prefix %q comes and goes", s.g, s.p), fmt.Sprintf(
		"Two listings of the coordinator's groups (GET /coord/v1/monitoring/groups) lack group %q under stream prefix %q, while its own GET, "+
			"sent between them, found it: something is creating and deleting it as this apply runs. Nothing was sent. Find what changes the "+
			"group, then run terraform plan again.", s.g, s.p))
	return prefix.Record{}, nil, false
}

// execute is the prefix's executor: it reads every group of the prefix,
// lets prefix.Decide turn that record into steps, and runs them. One stream
// scale when nothing is under way; otherwise, under the prefix lock, the
// take-over (adopt, resume, per-group scales of the groups left behind: a
// split prefix is repaired the same way) or the revert (rollbacks). Other
// groups' migrations heading elsewhere are waited for once, then the prefix
// is read and decided again.
func (s *scaler) execute(ctx context.Context) *scaleOutcome {
	for waited := false; ; waited = true {
		rec, ok := prefix.Record{}, false
		if s.basis != nil {
			// The record start read (and the basis check compared):
			// decided from as it is, one listing for both.
			rec, ok, s.basis = *s.basis, true, nil
		} else if rec, ok = s.record(ctx); !ok {
			return nil
		}
		d := prefix.Decide(s.input(rec, nil))
		if s.refused(d) {
			return nil
		}
		switch {
		case d.Done():
			return newScaleOutcome()
		case d.Steps[0].Kind == prefix.WaitOthers && !waited:
			if !s.waitForOthers(ctx) {
				return nil
			}
			continue
		case d.Steps[0].Kind == prefix.WaitOthers:
			s.refuseBlockedTakeOver(rec.Groups)
			return nil
		case d.Steps[0].Kind == prefix.StreamScale:
			if !s.basisHolds(rec) {
				return nil
			}
			s.before = &rec
			return s.scaleStream(ctx, newScaleOutcome())
		case d.Revert:
			return s.revert(ctx)
		}
		return s.takeOver(ctx, "adopted", nil)
	}
}

// record reads the prefix: every group, in name order, and s.self among
// them.
func (s *scaler) record(ctx context.Context) (prefix.Record, bool) {
	groups, ok := s.prefixGroups(ctx)
	if !ok {
		return prefix.Record{}, false
	}
	rec := prefix.Record{Prefix: s.p, Groups: groups}
	if self := rec.Group(s.g); self != nil {
		g := *self
		s.self = &g
	}
	return rec, true
}

// landedOutcome is what this apply's stream scale started, as rec shows it:
// the migrations a read-back of its lost answer found (underWay), or, once
// it was sent (s.before), the migrations to the target of groups that were
// behind it then (a scale that failed part-way, refused on its client
// retry with 409). nil when there are none. It also says what landed for
// the diagnostics (s.landed, nothingSent).
func (s *scaler) landedOutcome(rec prefix.Record, underWay map[string]client.Migration) *scaleOutcome {
	out := newScaleOutcome()
	var found []string
	for _, gi := range rec.Groups {
		m, ok := underWay[gi.ConsumerGroup]
		if am := prefix.Unfinished(&gi); !ok && am != nil && am.ToShardCount == s.target && s.before != nil && s.wasBehind(gi.ConsumerGroup) {
			m, ok = *am, true
		}
		if ok {
			out.track(gi.ConsumerGroup, m)
			found = append(found, fmt.Sprintf("group %q has %s", gi.ConsumerGroup, prefix.Describe(&m)))
		}
	}
	if !out.changed() {
		return nil
	}
	if s.landed == nil {
		s.landed = found
	}
	return out
}

// nothingSent ends a refusal's diagnostic: nothing was sent, or, when this
// apply's stream scale had already landed (landedOutcome), what it did.
func (s *scaler) nothingSent() string {
	if s.landed == nil {
		return "Nothing was sent to the coordinator."
	}
	return fmt.Sprintf("The stream scale this apply sent had been applied, at least in part (%s): its migrations are recorded in "+
		"state, and the next plan waits for them or repairs the prefix. Nothing more was sent.", strings.Join(s.landed, "; "))
}

// sends reports steps of which one sends a mutation (prefix.Step.Sends).
func sends(steps []prefix.Step) bool {
	for _, st := range steps {
		if st.Sends() {
			return true
		}
	}
	return false
}

// basisHolds is the executor's basis rule for every record of the prefix
// read after the first, checked before anything is sent from it
// (prefix.Record.Moved): the first was compared with the plan, so a later
// one in which nothing moved except towards the target sends no more than
// the plan showed. A record from which only adoptions follow sends nothing
// and is not checked. Otherwise (a group that appeared,
// went, or moved elsewhere while the apply waited for other migrations, or
// between a refused stream scale and its second decision) it refuses as a
// stale plan, naming what moved, and nothing more is sent. The groups this
// run creates, deletes or replaces are its own.
func (s *scaler) basisHolds(rec prefix.Record) bool {
	if s.first == nil {
		return true
	}
	ours := func(g string) bool { return s.plans != nil && s.plans.ownInRun(s.p, g) }
	moved := s.first.Moved(rec, s.target, ours)
	if len(moved) == 0 {
		return true
	}
	s.diags.AddError(fmt.Sprintf("Stale plan: the groups of stream prefix %q changed during the apply", s.p), fmt.Sprintf(
		"The apply checked the plan's basis against the prefix (%s), then read it again before its next request, and since then: %s. "+
			"Sending more now would make a change nobody reviewed. %s\n\nRun terraform plan again, review the new resharding preview, "+
			"and apply that plan.", s.first, strings.Join(moved, "; "), s.nothingSent()))
	return false
}

// input is the decision's input for a record; known are the migrations an
// earlier read saw under way (a lost scale's read-back) or, for a wait-only
// plan, the migrations of the wait it resumes that ended away from the
// target (the wait reads how they ended).
func (s *scaler) input(rec prefix.Record, known map[string]client.Migration) prefix.Input {
	if s.waitOnly && known == nil {
		known = map[string]client.Migration{}
		for name, id := range s.resumed {
			if g := rec.Group(name); g != nil && g.ShardCount != s.target && prefix.Unfinished(g) == nil {
				known[name] = client.Migration{ReshardingID: id, ToShardCount: s.target, FromShardCount: g.ShardCount, State: client.MigrationActive}
			}
		}
	}
	return prefix.Input{Record: rec, Self: s.g, Target: s.target, RollbackOnRevert: s.rollbackOnRevert, WaitOnly: s.waitOnly, Known: known}
}

// refused reports a decision to send nothing, with its diagnostic.
func (s *scaler) refused(d prefix.Decision) bool {
	if d.Refusal == nil {
		return false
	}
	gi := d.Refusal.Groups[0]
	switch d.Refusal.Kind {
	case prefix.PreparingElsewhere:
		s.diags.AddError(fmt.Sprintf("Cannot scale stream prefix %q to %d shards: a PREPARING migration blocks it", s.p, s.target),
			preparingElsewhereDetail(s.p, s.target, gi)+"\n\n"+s.nothingSent())
	case prefix.RevertRefused:
		s.diags.AddError(fmt.Sprintf("Stream prefix %q is being resharded away from %d shards", s.p, s.target),
			revertRefusedDetail(s.p, s.target, s.rollbackOnRevert, d.Refusal.Groups))
	case prefix.WaitOnlyStale:
		s.refuseWaitOnly(&gi)
	}
	return true
}

func scaleErrorHint(err error) string {
	switch client.ErrorCode(err) {
	case client.CodeStreamNotFound:
		return "No group exists under this stream prefix any more."
	case client.CodeRedisStreamProvisioningFailed:
		return "The coordinator could not provision the new shards in Redis; the affected group's migration stays PREPARING. " +
			"Run terraform apply again once Redis is healthy: the provider resumes it with the same target."
	}
	return ""
}

// takeOver reads every group of the prefix and runs the decision's steps
// one group at a time: it adopts migrations already heading to the target,
// resumes a PREPARING one with the same target, and scales groups left
// behind (a split prefix, a stream scale that failed part-way) with the
// per-group endpoint. Migrations heading elsewhere refuse it before anything
// is sent (refuseBlockedTakeOver): scaling the rest first would leave the
// prefix at two counts. Under the lock it never sends a stream scale: what a
// stream scale would do, it does group by group.
//
// It holds the prefix lock and journals each step (prefix.Run), as a stream
// scale does: a create of the prefix in this apply comes before it, or
// after it and brings itself to the target.
//
// underWay are the migrations to the target that an earlier read of the
// prefix saw under way (the read-back of a scale whose answer was lost):
// prefix.Input.Known. The group itself is recorded as this read has it
// (s.self), not as the earlier read did.
func (s *scaler) takeOver(ctx context.Context, verb string, underWay map[string]client.Migration) *scaleOutcome {
	defer s.locks.Lock(s.p)()
	rec, ok := s.record(ctx)
	if !ok {
		return nil
	}
	// What this apply's own stream scale started (landedOutcome) is
	// recorded whatever stops the take-over: it already happened, and
	// the next plan waits for it or repairs the prefix.
	landed := s.landedOutcome(rec, underWay)
	refuse := func() *scaleOutcome { return landed }
	if s.refuseBlockedTakeOver(rec.Groups) {
		return refuse()
	}
	d := prefix.Decide(s.input(rec, underWay))
	if s.refused(d) {
		return refuse()
	}
	steps := d.Steps
	if len(steps) > 0 && steps[0].Kind == prefix.StreamScale {
		steps = steps[1:]
		for _, gi := range rec.Groups {
			if gi.ShardCount != s.target {
				steps = append(steps, prefix.Step{Kind: prefix.ScaleGroup, Group: gi.ConsumerGroup})
			}
		}
	}
	if sends(steps) && !s.basisHolds(rec) {
		return refuse()
	}
	out := newScaleOutcome()
	var done []string
	for _, st := range steps {
		gi := *rec.Group(st.Group)
		switch st.Kind {
		case prefix.Adopt:
			s.note(prefix.Adopt, gi.ConsumerGroup, "")
			out.track(gi.ConsumerGroup, *st.Migration)
			if prefix.Unfinished(&gi) == nil {
				done = append(done, fmt.Sprintf("adopted migration %s of group %q (%d→%d), no longer active since the read-back", st.Migration.ReshardingID, gi.ConsumerGroup, st.Migration.FromShardCount, st.Migration.ToShardCount))
			} else {
				am := st.Migration
				done = append(done, fmt.Sprintf("adopted migration %s of group %q (%d→%d, %s)", am.ReshardingID, gi.ConsumerGroup, am.FromShardCount, am.ToShardCount, am.State))
			}
		case prefix.ScaleGroup:
			action := "scaled group %q with the per-group scale endpoint (%s)"
			if st.Resume {
				action = "resumed group %q's PREPARING migration with the same target (%s)"
			}
			m, err := s.scaleGroup(ctx, gi)
			if err != nil {
				addAPIError(s.diags, fmt.Sprintf("Failed to scale group %q under stream prefix %q to %d shards", gi.ConsumerGroup, s.p, s.target), err,
					"Groups finished so far: "+orNone(done)+". Run terraform apply again to continue.")
				return nil
			}
			out.track(gi.ConsumerGroup, *m)
			done = append(done, fmt.Sprintf(action, gi.ConsumerGroup, m.ReshardingID))
		}
	}
	if len(done) > 0 {
		s.diags.AddWarning(fmt.Sprintf("Took over the resharding of stream prefix %q (%s)", s.p, verb), fmt.Sprintf(
			"A stream-level scale to %d shards could not simply be started, so the provider read every group of the prefix and: %s.",
			s.target, strings.Join(done, "; ")))
	}
	return out
}

// revert runs a revert decision: the desired count is where the active
// migrations started, and rollback_on_revert allows rolling them back
// (prefix.Decide refuses otherwise, naming the calls to make).
//
// Like takeOver it holds the prefix lock and journals each step; a group at another count with nothing under way (one this
// apply created with the count the prefix had at plan time, or a split
// prefix's) is brought to the target with the per-group scale once the
// rollbacks are done, so the prefix keeps one count.
func (s *scaler) revert(ctx context.Context) *scaleOutcome {
	defer s.locks.Lock(s.p)()
	rec, ok := s.record(ctx)
	if !ok || !s.basisHolds(rec) {
		return nil
	}
	d := prefix.Decide(s.input(rec, nil))
	if s.refused(d) {
		return nil
	}
	if !d.Revert {
		// The prefix moved between the two reads: decide with the lock held.
		s.diags.AddError(fmt.Sprintf("Stream prefix %q changed while this apply was reverting it to %d shards", s.p, s.target), fmt.Sprintf(
			"The groups of the prefix are now: %s. Nothing was sent to the coordinator. Run terraform plan again and review it.", rec))
		return nil
	}
	out := newScaleOutcome()
	var rolled []string
	for _, st := range d.Steps {
		gi := *rec.Group(st.Group)
		if st.Kind == prefix.Rollback {
			am := st.Migration
			m, err := s.rollback(ctx, gi.ConsumerGroup, am.ReshardingID)
			if err != nil {
				addAPIError(s.diags, fmt.Sprintf("Failed to roll back migration %s of group %q", am.ReshardingID, gi.ConsumerGroup), err,
					"Rolled back so far: "+orNone(rolled)+".")
				return nil
			}
			to := am.ToShardCount
			out.previous = &to
			out.track(gi.ConsumerGroup, *m)
			rolled = append(rolled, fmt.Sprintf("%s of group %q (%d→%d)", am.ReshardingID, gi.ConsumerGroup, am.FromShardCount, am.ToShardCount))
			continue
		}
		m, err := s.scaleGroup(ctx, gi)
		if err != nil {
			addAPIError(s.diags, fmt.Sprintf("Failed to scale group %q under stream prefix %q to %d shards", gi.ConsumerGroup, s.p, s.target), err,
				fmt.Sprintf("The provider rolled the prefix back to %d (rolled back: %s) and scales group %q, at %d shards, to %d with the "+
					"per-group scale, and that did not take effect: the prefix routes with two shard counts until it does. The next plan "+
					"shows the split prefix and its apply sends this scale again.", s.target, orNone(rolled), gi.ConsumerGroup, gi.ShardCount, s.target))
			return nil
		}
		rolled = append(rolled, fmt.Sprintf("group %q, at %d shards, scaled to %d (%s)", gi.ConsumerGroup, gi.ShardCount, s.target, m.ReshardingID))
	}
	out.state = client.MigrationRolledBack
	s.diags.AddWarning(fmt.Sprintf("Rolled back the resharding of stream prefix %q", s.p), fmt.Sprintf(
		"rollback_on_revert is set and shard_count = %d is where the active migrations started, so they were rolled back: %s. "+
			"Entries producers already wrote to shards that the rollback removes are stranded: the coordinator no longer assigns those shards.",
		s.target, strings.Join(rolled, "; ")))
	return out
}

// prefixGroups lists the groups of the stream prefix, in name order (the
// order the coordinator scales them in).
func (s *scaler) prefixGroups(ctx context.Context) ([]client.Group, bool) {
	groups, err := s.api.Groups(ctx)
	if err != nil {
		addAPIError(s.diags, fmt.Sprintf("Failed to list the groups of stream prefix %q", s.p), err, "")
		return nil, false
	}
	var out []client.Group
	for _, gi := range groups {
		if gi.StreamPrefix == s.p {
			out = append(out, gi)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ConsumerGroup < out[j].ConsumerGroup })
	return out, true
}

func blockingMigrationsDetail(p string, target int32, groups []client.Group) string {
	var b strings.Builder
	fmt.Fprintf(&b, "A stream-level scale of %q to %d shards is refused (409 ACTIVE_MIGRATION_EXISTS) while these migrations are active:", p, target)
	for _, gi := range groups {
		am := gi.ActiveMigration
		fmt.Fprintf(&b, "\n  - group %q: migration %s, %d→%d shards, state %s", gi.ConsumerGroup, am.ReshardingID, am.FromShardCount, am.ToShardCount, am.State)
	}
	return b.String()
}

func rollbackCalls(p string, groups []client.Group) string {
	var b strings.Builder
	for _, gi := range groups {
		if gi.ActiveMigration.State != client.MigrationActive {
			continue
		}
		fmt.Fprintf(&b, "  POST %s  body {\"requestedBy\":\"<you>\",\"reason\":\"<why>\"}\n",
			client.RollbackPath(p, gi.ConsumerGroup, gi.ActiveMigration.ReshardingID))
	}
	return strings.TrimRight(b.String(), "\n")
}

func orNone(items []string) string {
	if len(items) == 0 {
		return "nothing"
	}
	return strings.Join(items, "; ")
}

// refuseWaitOnly stops a plan that waits and sends no scale, when a group of
// the prefix is not where waiting would bring it.
func (s *scaler) refuseWaitOnly(gi *client.Group) {
	s.diags.AddError(fmt.Sprintf("Stale plan: the resharding of stream prefix %q this plan waits for is no longer under way", s.p), fmt.Sprintf(
		"The plan waits for the migration under way to %d shards and sends no scale, but group %q now has %d shards%s. Sending a scale "+
			"now would make a change nobody reviewed, so nothing was sent to the coordinator.\n\n"+
			"Run terraform plan again, review the new resharding preview, and apply that plan.",
		s.target, gi.ConsumerGroup, gi.ShardCount, activeMigrationNote(gi)))
}
