package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// The shard count's executor. What an apply of
// redisstreamcoordinator_group_shard_count sends: Create and Update call
// apply (group_shard_count_resource.go), which runs this executor. start
// reads the prefix (prefixGroups), checks the plan's basis
// (plan_basis.go, with the run's own creates and deletes from
// plan_registry.go) and runs prefix.Decide's steps (internal/prefix:
// record.go the basis, decide.go the steps): scaleStream, or runSteps'
// per-group scales and rollbacks, each journaled in prefix.Run before its
// send and settled by prefix.Settle (settle.go; a rollback's in
// mutation_settle.go, shared with the actions). Its waits only read
// (group_shard_count_wait.go).

// scaler brings every group of a stream prefix to one target shard count,
// starting a stream-level scale or taking over migrations already under way.
type scaler struct {
	api              *client.Client
	timing           settleTiming // how long what was sent is settled for (grace.go)
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
	// self is the group as last read; selfSinceSend: that read (the
	// wait's listing) came after the last send, so the state recorded
	// after the change needs no read of its own (settleComputed).
	self          *client.Group
	selfSinceSend bool
	// plans, when set, is the run's registry: a group this run deleted is
	// no longer waited for.
	plans *planRegistry
	// run, when set, is the run's journal (prefix.Run): every step is
	// journaled there, under the prefix lock, before it is sent (note),
	// with planned: the prefix's groups as the plan showed them.
	run     *prefix.Run
	planned map[string]int64
	watch   *prefix.Watcher // the run's one poll of every wait (group_shard_count_wait.go)
	// reads, when set, is the run's group reader, told of every send.
	reads *groupReader
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
	s.selfSinceSend = false
	s.sent()
	if s.run != nil {
		s.run.Note(s.p, prefix.Entry{Kind: kind, Group: group, Target: s.target, Planned: s.planned, RequestID: requestID})
	}
}

// sent notes a mutation of the prefix with the run's group reader, before
// a step's send (note) and after it returns: no answer issued before either
// serves a later read of the prefix (group_snapshot.go, rule 4).
func (s *scaler) sent() {
	if s.reads != nil {
		s.reads.noteMutation(s.p)
	}
}

// strike takes back the step just journaled: its send was proved not to
// have reached the coordinator.
func (s *scaler) strike() {
	if s.run != nil {
		s.run.Strike(s.p)
	}
}

// impliedAfterSend is the group as the answers to this apply's sends imply,
// from its last reading (which predates the last send): its count and
// active migration follow its tracked migration (PREPARING keeps the old
// count; ACTIVE, DRAINING and DEPRECATED report the new one; ROLLED_BACK the
// one it started from). Its metadata version and epochs stay as read: a
// lower bound, and a pair a later reading cannot take for a regression.
func (s *scaler) impliedAfterSend(out *scaleOutcome) *client.Group {
	g := *s.self
	m, ok := out.migrations[s.g]
	if !ok {
		return &g
	}
	switch m.State {
	case client.MigrationPreparing:
	case client.MigrationRolledBack, client.MigrationRollingBack:
		g.ShardCount = m.FromShardCount
	default:
		g.ShardCount = m.ToShardCount
	}
	g.ActiveMigration = nil
	if !m.Finished() && m.State != client.MigrationRolledBack && m.State != client.MigrationRollingBack {
		mm := m
		g.ActiveMigration = &mm
	}
	return &g
}

// deletedInRun reports a group of the prefix this run deleted (a
// replacement's delete, or a destroy, in the same apply).
func (s *scaler) deletedInRun(g string) bool {
	return s.plans != nil && s.plans.of(s.p, g).deleted != nil
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

// unfinished is o itself when none of its migrations is finished (a
// scale's, a take-over's); otherwise, as after a revert's rollbacks, a new
// outcome of the unfinished ones alone, for the wait (which absorb brings
// back into o).
func (o *scaleOutcome) unfinished() *scaleOutcome {
	for _, m := range o.migrations {
		if m.Finished() {
			p := newScaleOutcome()
			for g, m := range o.migrations {
				if !m.Finished() {
					p.track(g, m)
				}
			}
			return p
		}
	}
	return o
}

// absorb takes back what the wait saw of the migrations of p (o.unfinished):
// each one's last state, the scale-outs still waiting for a consumer, and
// the groups it stopped tracking (deleted by this apply: untrackDeleted).
// A revert's outcome keeps its ROLLED_BACK state.
func (o *scaleOutcome) absorb(p *scaleOutcome) {
	if p == o {
		return
	}
	for g, m := range o.migrations {
		if _, still := p.migrations[g]; !still && !m.Finished() {
			delete(o.migrations, g)
			delete(o.waitingForConsumer, g)
		}
	}
	for g, m := range p.migrations {
		o.migrations[g] = m
	}
	for g := range p.waitingForConsumer {
		o.waitingForConsumer[g] = true
	}
	if o.state != client.MigrationRolledBack {
		o.state = aggregateState(o.migrations)
	}
}

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
	rec, ok := s.readPrefix(ctx, true)
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
// split prefix is repaired the same way) or the revert (rollbacks, then the
// take-over of what heads to the target). Other
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
		in := s.input(rec, nil)
		in.Waited = waited
		d := prefix.Decide(in)
		if s.refused(d) {
			return nil
		}
		switch {
		case d.Done():
			return newScaleOutcome()
		case d.Steps[0].Kind == prefix.WaitOthers:
			if !s.waitForOthers(ctx, d.Steps[0].Blocking) {
				return nil
			}
			continue
		case d.Steps[0].Kind == prefix.StreamScale:
			if !s.basisHolds(rec) {
				return nil
			}
			s.before = &rec
			return s.scaleStream(ctx, newScaleOutcome())
		case d.Revert:
			return s.runSteps(ctx, "", nil)
		}
		return s.runSteps(ctx, "adopted", nil)
	}
}

// record reads the prefix afresh: every group, in name order, and s.self
// among them.
func (s *scaler) record(ctx context.Context) (prefix.Record, bool) { return s.readPrefix(ctx, false) }

// readPrefix is record; first: the executor's first reading, which the
// waits' next poll round may serve (prefix.Watcher.Join).
func (s *scaler) readPrefix(ctx context.Context, first bool) (prefix.Record, bool) {
	groups, ok := s.prefixGroups(ctx, first)
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
	ours := func(g string) bool { return s.plans != nil && s.plans.of(s.p, g).own() }
	moved := s.first.Moved(rec, s.target, ours)
	if len(moved) == 0 {
		return true
	}
	s.diags.AddError(fmt.Sprintf("Stale plan: the groups of stream prefix %q changed during the apply", s.p), fmt.Sprintf(
		"The apply checked the plan's basis against the prefix (%s), then read it again before its next request, and since then: %s. "+
			"Sending more now would make a change nobody reviewed. %s\n\n"+staleBasisNext, s.first, strings.Join(moved, "; "), s.nothingSent()))
	return false
}

// input is the decision's input for a record; known are the migrations an
// earlier read saw under way (a lost scale's read-back) or, for a wait-only
// plan, the migrations of the wait it resumes that ended away from the
// target (the wait reads how they ended).
func (s *scaler) input(rec prefix.Record, known map[string]client.Migration) prefix.Input {
	if s.waitOnly && known == nil {
		known = prefix.ResumedWait(rec, s.target, s.resumed)
	}
	return prefix.Input{Record: rec, Self: s.g, Target: s.target, RollbackOnRevert: s.rollbackOnRevert, WaitOnly: s.waitOnly, Known: known}
}

// refused reports a decision to send nothing, with its diagnostic.
func (s *scaler) refused(d prefix.Decision) bool {
	switch {
	case d.Refusal == nil:
		return false
	case d.Refusal.Kind == prefix.WaitOnlyStale:
		s.refuseWaitOnly(&d.Refusal.Groups[0])
	default:
		summary, detail := refusalText(s.p, s.target, s.rollbackOnRevert, d.Refusal)
		s.diags.AddError(summary, detail+"\n\n"+s.nothingSent())
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

// runSteps runs prefix.Decide's per-group steps (adopt, per-group scale,
// rollback) one group at a time, under the prefix lock, from a record read
// under it, journaling each (prefix.Run): a take-over (prefix.Input.TakeOver;
// verb says why), or a revert (verb ""; Decision.Revert). underWay are the
// migrations to the target an earlier read saw under way (a lost answer's
// read-back: Input.Known); what this apply's stream scale started
// (landedOutcome) is recorded whatever stops a take-over.
func (s *scaler) runSteps(ctx context.Context, verb string, underWay map[string]client.Migration) *scaleOutcome {
	defer s.locks.Lock(s.p)()
	revert := verb == ""
	rec, ok := s.record(ctx)
	if !ok || (revert && !s.basisHolds(rec)) {
		return nil
	}
	var landed *scaleOutcome
	if !revert {
		landed = s.landedOutcome(rec, underWay)
	}
	in := s.input(rec, underWay)
	in.TakeOver = !revert
	d := prefix.Decide(in)
	if s.refused(d) || (!revert && d.Sends() && !s.basisHolds(rec)) {
		return landed
	}
	if revert && !d.Revert {
		// The prefix moved between the two reads: decided with the lock held.
		s.diags.AddError(fmt.Sprintf("Stream prefix %q changed while this apply was reverting it to %d shards", s.p, s.target), fmt.Sprintf(
			"The groups of the prefix are now: %s. Nothing was sent to the coordinator.\n\n"+staleBasisNext, rec))
		return nil
	}
	out := newScaleOutcome()
	var did []string
	// stopped is what a failed step leaves: what this apply's stream scale
	// started, and the steps done before it, which state records (apply)
	// so that the next plan does not take them for another actor's.
	stopped := func() *scaleOutcome {
		switch {
		case !revert:
			return merged(landed, out)
		case !out.changed():
			return nil
		}
		out.state = client.MigrationRolledBack
		return out
	}
	for _, st := range d.Steps {
		gi := *rec.Group(st.Group)
		am := st.Migration
		switch st.Kind {
		case prefix.Adopt:
			s.note(prefix.Adopt, gi.ConsumerGroup, "")
			out.track(gi.ConsumerGroup, *am)
			switch {
			case revert:
				did = append(did, fmt.Sprintf("took over group %q's %s", gi.ConsumerGroup, prefix.Describe(am)))
			case prefix.Unfinished(&gi) == nil:
				did = append(did, fmt.Sprintf("adopted migration %s of group %q (%d→%d), no longer active since the read-back", am.ReshardingID, gi.ConsumerGroup, am.FromShardCount, am.ToShardCount))
			default:
				did = append(did, fmt.Sprintf("adopted migration %s of group %q (%d→%d, %s)", am.ReshardingID, gi.ConsumerGroup, am.FromShardCount, am.ToShardCount, am.State))
			}
		case prefix.Rollback:
			m, err := s.rollback(ctx, gi.ConsumerGroup, am.ReshardingID)
			if err != nil {
				addAPIError(s.diags, fmt.Sprintf("Failed to roll back migration %s of group %q", am.ReshardingID, gi.ConsumerGroup), err,
					"Done so far: "+orNone(did)+".")
				return stopped()
			}
			to := am.ToShardCount
			out.previous = &to
			out.track(gi.ConsumerGroup, *m)
			did = append(did, fmt.Sprintf("rolled back %s of group %q (%d→%d)", am.ReshardingID, gi.ConsumerGroup, am.FromShardCount, am.ToShardCount))
		case prefix.ScaleGroup:
			m, err := s.scaleGroup(ctx, gi)
			if err != nil {
				next := "Groups finished so far: " + orNone(did) + ". Run terraform apply again to continue."
				if revert {
					next = fmt.Sprintf("The provider took the prefix back to %d (done: %s) and scales group %q, at %d shards, to %d with the "+
						"per-group scale, and that did not take effect: the prefix routes with two shard counts until it does. The next plan "+
						"shows the split prefix and its apply sends this scale again.", s.target, orNone(did), gi.ConsumerGroup, gi.ShardCount, s.target)
				}
				addAPIError(s.diags, fmt.Sprintf("Failed to scale group %q under stream prefix %q to %d shards", gi.ConsumerGroup, s.p, s.target), err, next)
				return stopped()
			}
			// Its migration is the apply's to wait for, as any scale's.
			out.track(gi.ConsumerGroup, *m)
			switch {
			case st.Resume:
				did = append(did, fmt.Sprintf("resumed group %q's PREPARING migration with the same target (%s)", gi.ConsumerGroup, m.ReshardingID))
			case revert:
				did = append(did, fmt.Sprintf("scaled group %q, at %d shards, to %d (%s)", gi.ConsumerGroup, gi.ShardCount, s.target, m.ReshardingID))
			default:
				did = append(did, fmt.Sprintf("scaled group %q with the per-group scale endpoint (%s)", gi.ConsumerGroup, m.ReshardingID))
			}
		}
	}
	switch {
	case revert:
		out.state = client.MigrationRolledBack
		s.diags.AddWarning(fmt.Sprintf("Rolled back the resharding of stream prefix %q", s.p), fmt.Sprintf(
			"rollback_on_revert is set and shard_count = %d is where the active migrations started, so the prefix was taken back: %s. "+
				"Entries producers already wrote to shards that the rollback removes are stranded: the coordinator no longer assigns those shards.",
			s.target, strings.Join(did, "; ")))
	case len(did) > 0:
		s.diags.AddWarning(fmt.Sprintf("Took over the resharding of stream prefix %q (%s)", s.p, verb), fmt.Sprintf(
			"A stream-level scale to %d shards could not simply be started, so the provider read every group of the prefix and: %s.",
			s.target, strings.Join(did, "; ")))
	}
	return out
}

// merged is the outcome of both (either may be nil); nil when neither
// changed anything.
func merged(a, b *scaleOutcome) *scaleOutcome {
	out := newScaleOutcome()
	for _, o := range []*scaleOutcome{a, b} {
		if o == nil {
			continue
		}
		for g, m := range o.migrations {
			out.track(g, m)
		}
		for g := range o.waitingForConsumer {
			out.waitingForConsumer[g] = true
		}
	}
	if !out.changed() {
		return nil
	}
	return out
}

// prefixGroups lists the groups of the stream prefix, in name order (the
// order the coordinator scales them in).
func (s *scaler) prefixGroups(ctx context.Context, first bool) ([]client.Group, bool) {
	groups, joined, err := []client.Group(nil), false, error(nil)
	if first && s.watch != nil {
		groups, joined, err = s.watch.Join(ctx)
	}
	if !joined {
		groups, err = s.api.GroupsFor(ctx, groupsOperation)
	}
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
			staleBasisNext,
		s.target, gi.ConsumerGroup, gi.ShardCount, activeMigrationNote(gi)))
}

// Sending the steps, and the one rule for their lost answers.

// errDiagnosed: a read-back failed and said so in the diagnostics itself.
var errDiagnosed = errors.New("reported in the diagnostics")

// scaleStream sends the stream-level scale and settles its outcome by the
// one rule for lost answers (prefix.Settle). A lost answer (no answer, a
// proxy's 5xx, an unreadable 202) is read back before anything else is
// decided: a migration to the target means the scale happened and is
// adopted; the old count without a migration means it did not, and the same
// scale (same request id) is sent again. A scale is not idempotent while its
// migration is active, so a failed read-back sends nothing more. The request
// and its read-back run on a grace context, so an interrupt while it is in
// flight still ends with what happened recorded in state.
func (s *scaler) scaleStream(ctx context.Context, out *scaleOutcome) *scaleOutcome {
	m := s.mutation
	m.RequestID = s.api.NewRequestID("scale-stream")
	mctx, done := s.timing.graceContext(ctx, "scale-stream "+m.RequestID)
	defer done()
	sends := 0
	var lost error // the answer the read-back settles, for its warning
	// landed: the migrations to the target a read-back found (the scale
	// happened): the take-over adopts them.
	var landed map[string]client.Migration
	res, _, err := prefix.Settle(mctx, prefix.Mutation[*scaleOutcome]{
		What:      fmt.Sprintf("stream scale of stream prefix %q to %d shards", s.p, s.target),
		RequestID: m.RequestID,
		Send: func(ctx context.Context) (*scaleOutcome, error) {
			unlock := s.locks.Lock(s.p)
			defer unlock()
			// Journaled under the prefix lock, so a create of the
			// prefix in this apply either precedes the scale or sees it
			// (createCount).
			s.note(prefix.StreamScale, "", m.RequestID)
			resp, err := s.api.ScaleStream(ctx, s.p, s.target, m)
			s.sent()
			if sends == 0 && provedNotApplied(err) {
				s.strike()
			}
			sends++
			if err != nil {
				lost = err
				return nil, err
			}
			for i, name := range resp.AffectedConsumerGroups {
				if i < len(resp.Migrations) {
					out.track(name, resp.Migrations[i])
				}
			}
			tflog.Info(ctx, "stream scale accepted", map[string]any{
				"stream_prefix": s.p, "target_shard_count": s.target, "affected_groups": resp.AffectedConsumerGroups, "request_id": m.RequestID,
			})
			return out, nil
		},
		ReadBack: func(ctx context.Context) (*scaleOutcome, bool, error) {
			// It only reads: what the scale started is taken over below,
			// once the scale is settled.
			applied, underWay := s.readBackScale(ctx)
			if !applied && s.diags.HasError() {
				return nil, false, errDiagnosed
			}
			landed = underWay
			return nil, applied, nil
		},
	})
	var un *prefix.UnsettledError
	switch {
	case err == nil && landed != nil:
		// A lost answer, read back as applied: adopt what it started, and
		// bring any group it left behind there, from a fresh record.
		adopted := s.runSteps(mctx, "read back after the scale's answer was lost", landed)
		if adopted != nil {
			s.diags.AddWarning(fmt.Sprintf("The answer to the scale of stream prefix %q was lost; the scale had been applied", s.p), fmt.Sprintf(
				"The scale of stream prefix %q to %d shards (request id %s) got no answer from the coordinator itself: %s.\n\n"+
					"The provider read the groups back: %s. So the coordinator had accepted the scale: this apply adopted its migration(s) and "+
					"waits for them, without sending a second scale.", s.p, s.target, m.RequestID, lostAnswerCause(lost), strings.Join(s.landed, "; ")))
		}
		return adopted
	case err == nil:
		return res
	case errors.As(err, &un) && errors.Is(un.ReadBack, errDiagnosed):
		return nil
	case errors.As(err, &un) && un.Reason == prefix.LimitReached:
		addAPIError(s.diags, fmt.Sprintf("Failed to scale stream prefix %q to %d shards", s.p, s.target), un.Lost, fmt.Sprintf(
			"The scale's answer was lost %d times, and each time the groups read back showed it had not happened (still %d shards, no "+
				"migration). Nothing was changed. Check the coordinator's health and the proxy in front of it, then run terraform apply again.",
			un.Sends, s.self.ShardCount))
		return nil
	case client.IsNotSent(err):
		// The interrupt rule (client.WithOperation): nothing new is sent.
		what := fmt.Sprintf("The scale of stream prefix %q to %d shards (request id %s) was not sent: the operation ended first.", s.p, s.target, m.RequestID)
		if errors.As(err, &un) {
			err = un.NotSent
			what = fmt.Sprintf("The scale of stream prefix %q to %d shards (request id %s) was sent, and its answer was lost; reading the "+
				"groups back showed it had not happened (still %d shards, no migration to %d). The operation ended meanwhile, so it "+
				"was not sent again.", s.p, s.target, m.RequestID, s.self.ShardCount, s.target)
		}
		addAPIError(s.diags, fmt.Sprintf("Scale of stream prefix %q to %d shards not sent", s.p, s.target), err, what+
			" Nothing was changed on the coordinator. The next plan shows the same scale again.")
		return nil
	case client.IsConflict(err, client.CodeActiveMigrationExists):
		// A stream scale that failed part-way, a sibling's migration, or
		// a lost scale that landed after the read-back: find out which
		// from the groups.
		tflog.Warn(ctx, "stream scale refused because a migration is active; recovering from the groups' state", map[string]any{"stream_prefix": s.p})
		if !s.redecided {
			// The prefix moved since the record the decision was made
			// from: decide again, once, from a fresh one (it may wait for
			// other migrations, or adopt ours).
			s.redecided = true
			return s.execute(ctx)
		}
		return s.runSteps(mctx, "recovered", nil)
	default:
		addAPIError(s.diags, fmt.Sprintf("Failed to scale stream prefix %q to %d shards", s.p, s.target), err, scaleErrorHint(err))
		return nil
	}
}

// readBackScale reads the prefix's groups after a scale whose outcome is
// unknown, and sends nothing. applied: the scale happened (a group has a
// migration to the target, or a group that was behind has the target
// count); underWay are the migrations to the target it found (not nil when
// applied).
func (s *scaler) readBackScale(ctx context.Context) (applied bool, underWay map[string]client.Migration) {
	siblings, ok := s.prefixGroups(ctx, false)
	if !ok {
		return false, nil
	}
	var found []string
	underWay = map[string]client.Migration{}
	for _, gi := range siblings {
		if am := gi.ActiveMigration; am != nil && !am.Finished() && am.ToShardCount == s.target {
			found = append(found, fmt.Sprintf("group %q has migration %s (%d→%d shards, %s)", gi.ConsumerGroup, am.ReshardingID, am.FromShardCount, am.ToShardCount, am.State))
			underWay[gi.ConsumerGroup] = *am
		} else if gi.ShardCount == s.target && s.wasBehind(gi.ConsumerGroup) {
			found = append(found, fmt.Sprintf("group %q already has %d shards", gi.ConsumerGroup, s.target))
		}
		if gi.ConsumerGroup == s.g {
			g := gi
			s.self = &g
		}
	}
	if len(found) == 0 {
		return false, nil
	}
	s.landed = found
	return true, underWay
}

// wasBehind reports a group that was not at the target when the stream
// scale was sent (s.before), so finding it there proves the scale landed. A
// group of a split prefix already at the target before proves nothing.
// Without that record only this resource's own group counts, as it was read
// before the scale.
func (s *scaler) wasBehind(g string) bool {
	if s.before == nil {
		return g == s.g
	}
	was := s.before.Group(g)
	return was != nil && was.ShardCount != s.target
}

// lostAnswerCause says in a few words what came back instead of an answer.
func lostAnswerCause(err error) string {
	var amb *client.AmbiguousError
	if !errors.As(err, &amb) {
		return err.Error()
	}
	switch amb.Kind {
	case client.AmbiguousNotCoordinatorAnswer:
		if amb.Status == 500 {
			return "a 500 without the coordinator's errorCode (its store or state mutex failed, or a proxy answered)"
		}
		return fmt.Sprintf("a %d without the coordinator's errorCode, from a proxy or load balancer in front of it", amb.Status)
	case client.AmbiguousUnreadableAnswer:
		return fmt.Sprintf("a %d whose body could not be read", amb.Status)
	}
	if errors.Is(amb.Err, context.Canceled) {
		return "no answer before the operation was interrupted"
	}
	return "no answer (the connection was reset, closed or timed out)"
}

// rollback rolls back one group's ACTIVE migration with a fresh request id,
// reading a lost answer back (rollbackSettled).
func (s *scaler) rollback(ctx context.Context, g, reshardingID string) (*client.Migration, error) {
	m := s.mutation
	m.RequestID = s.api.NewRequestID("rollback-migration")
	s.note(prefix.Rollback, g, m.RequestID)
	mig, _, err := rollbackSettled(ctx, s.timing, s.api, s.p, g, reshardingID, m)
	s.sent()
	return mig, err
}

// scaleGroup scales one group left behind with the per-group endpoint,
// settling a lost answer, or a 409 ACTIVE_MIGRATION_EXISTS, by the one rule
// (prefix.Settle): a migration of the group to the target that moves by
// itself is the scale's result; the group unchanged, or PREPARING to the
// target, means it did not happen, and it is sent again with the same
// request id (which resumes a PREPARING one). A scale is not idempotent
// while its migration is active, so a failed read-back sends nothing more.
func (s *scaler) scaleGroup(ctx context.Context, gi client.Group) (*client.Migration, error) {
	m := s.mutation
	m.RequestID = s.api.NewRequestID("scale-group")
	s.note(prefix.ScaleGroup, gi.ConsumerGroup, m.RequestID)
	mctx, done := s.timing.graceContext(ctx, "scale-group "+m.RequestID)
	defer done()
	var read *client.Group
	var answer error // the last send's answer
	sends := 0
	mig, _, err := prefix.Settle(mctx, prefix.Mutation[*client.Migration]{
		What:      fmt.Sprintf("scale of group %q under stream prefix %q to %d shards", gi.ConsumerGroup, s.p, s.target),
		RequestID: m.RequestID,
		Send: func(ctx context.Context) (*client.Migration, error) {
			var mig *client.Migration
			mig, answer = s.api.ScaleGroup(ctx, s.p, gi.ConsumerGroup, s.target, m)
			s.sent()
			sends++
			return mig, answer
		},
		// 409 ACTIVE_MIGRATION_EXISTS, on any send, is read back like a
		// lost answer: a migration to the target is adopted (CONTRACT §9:
		// "if the active migration already targets the desired count, adopt
		// it"): this scale's first send landing after its lost answer was
		// read back, or another actor's scale (or a stream scale still
		// being applied) heading where this one goes. A migration heading
		// elsewhere leaves the refusal as the outcome.
		Lost: func(err error) bool {
			return client.IsAmbiguous(err) || client.IsConflict(err, client.CodeActiveMigrationExists)
		},
		ReadBack: func(ctx context.Context) (*client.Migration, bool, error) {
			var err error
			if read, err = s.api.GetGroup(ctx, s.p, gi.ConsumerGroup); err != nil {
				return nil, false, err
			}
			// PREPARING to the target is not applied: it never moves by
			// itself, and the same scale sent again resumes it (§4.6).
			if am := read.ActiveMigration; am != nil && am.ToShardCount == s.target && am.State != client.MigrationPreparing && !am.Finished() {
				return am, true, nil
			}
			if read.ShardCount == s.target && read.ActiveMigration.Finished() {
				// Applied and already finished: nothing left to wait for.
				return &client.Migration{ReshardingID: client.NoopReshardingID, FromShardCount: s.target, ToShardCount: s.target, State: client.MigrationDeprecated}, true, nil
			}
			if client.IsConflict(answer, client.CodeActiveMigrationExists) {
				return nil, false, prefix.Decided(answer)
			}
			return nil, false, nil
		},
	})
	if sends <= 1 && provedNotApplied(err) {
		// Its one send was refused before any change, or never sent (the
		// interrupt gate): not a step of the run.
		s.strike()
	}
	var un *prefix.UnsettledError
	if errors.As(err, &un) && un.Reason == prefix.NotSentAgain {
		return nil, fmt.Errorf("the scale of group %q (request id %s) was sent and its answer was lost; the group read back showed it "+
			"had not happened (still %d shards), and it was not sent again: %w", gi.ConsumerGroup, m.RequestID, read.ShardCount, un.NotSent)
	}
	return mig, err
}

// provedNotApplied reports an answer proving that nothing of the request was
// applied: not sent at all, or refused before any change (400, 401, 403,
// 404, 422). A 409 or 503 may follow a part-way scale, so its step stays
// journaled (prefix.Run), and the take-over that handles it journals its
// own.
func provedNotApplied(err error) bool {
	if err == nil || client.IsAmbiguous(err) {
		return false
	}
	if client.IsNotSent(err) {
		return true
	}
	apiErr, ok := client.AsAPIError(err)
	if !ok {
		return false
	}
	switch apiErr.HTTPStatus {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity:
		return true
	}
	return false
}
