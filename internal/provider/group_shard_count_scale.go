package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// scaler brings every group of a stream prefix to one target shard count,
// starting a stream-level scale or taking over migrations already under way.
type scaler struct {
	// The configured provider's client, locks, reader, watcher and run memory (plans).
	*providerData
	p, g             string
	target           int32
	rollbackOnRevert bool
	mutation         client.Mutation
	diags            *diag.Diagnostics
	// checkBasis returning false stops the apply before any mutation.
	checkBasis func(ctx context.Context, group *client.Group) bool
	// waitOnly: the plan said it sends no scale, so a group that would need
	// one stops the apply.
	waitOnly bool
	resumed  map[string]string
	// selfSinceSend: self was read after the last send, so the state
	// recorded after the change needs no read of its own.
	self          *client.Group
	selfSinceSend bool
	// planned: the prefix's groups as the plan showed them.
	planned map[string]int64
	// basis is the prefix as start read it; nil once decided from.
	basis *prefix.Record
	// first holds the executor to the prefix as the apply found it: the plan's
	// check covers the siblings only when the plan listed them.
	first  *prefix.Record
	landed []string
	before *prefix.Record
	// noConsumer: the last decision's groups reaching the target by a
	// scale-out with no live consumer, what an apply that does not wait records.
	noConsumer []string
}

// note journals a step before it is sent; the caller holds the prefix lock.
func (s *scaler) note() {
	s.selfSinceSend = false
	s.sent()
	s.plans.noteScale(s.p, s.target, s.planned)
}

// sent runs before and after a send, so no listing answered before either
// serves a later read of the prefix.
func (s *scaler) sent() { s.groups.noteMutation(s.p) }

// impliedAfterSend is the group as this apply's answers imply, from a reading
// older than the last send. Metadata version and epochs stay as read: a lower
// bound a later reading cannot take for a regression.
func (s *scaler) impliedAfterSend(out *scaleOutcome) *client.Group {
	g := *s.self
	m, ok := out.migrations[s.g]
	if !ok {
		return &g
	}
	g.ActiveMigration = &m
	switch m.State {
	case client.MigrationPreparing:
	case client.MigrationRolledBack, client.MigrationRollingBack:
		g.ShardCount, g.ActiveMigration = m.FromShardCount, nil
	default:
		g.ShardCount = m.ToShardCount
	}
	if m.Finished() {
		g.ActiveMigration = nil
	}
	return &g
}

// scaleOutcome is what the scaler started or adopted, without noop migrations.
type scaleOutcome struct {
	previous           *int32
	migrations         map[string]client.Migration
	state              client.MigrationState
	waitingForConsumer map[string]bool
}

func newScaleOutcome() *scaleOutcome {
	return &scaleOutcome{migrations: map[string]client.Migration{}, waitingForConsumer: map[string]bool{}}
}

func (o *scaleOutcome) changed() bool { return len(o.migrations) > 0 }

// unfinished: the wait has a migration to track.
func (o *scaleOutcome) unfinished() bool {
	for _, m := range o.migrations {
		if !m.Finished() {
			return true
		}
	}
	return false
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

// aggregateState is the least advanced state; a rollback anywhere dominates.
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

// start returns nil after adding an error diagnostic.
func (s *scaler) start(ctx context.Context) *scaleOutcome {
	rec, ok := s.readPrefix(ctx, true)
	if !ok {
		return nil
	}
	group := rec.Group(s.g)
	if group == nil {
		if rec, group, ok = s.confirmMissing(ctx); !ok {
			return nil
		}
	}
	s.basis = &rec
	s.self = group
	if s.checkBasis != nil {
		if !s.checkBasis(ctx, group) {
			return nil
		}
		s.first = &rec
	}
	out := s.execute(ctx)
	for i := 0; out != nil && i < len(s.noConsumer); i++ {
		if m, ok := out.migrations[s.noConsumer[i]]; ok && !m.Finished() {
			out.waitingForConsumer[s.noConsumer[i]] = true // a wait reads it again
		}
	}
	return out
}

// confirmMissing GETs a group the listing lacks, so the error reports the
// coordinator's answer and a group created since the listing is not refused.
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
	rec, ok := s.readPrefix(ctx, false)
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

// execute ends because the wait for others happens once and a refused stream
// scale is decided again once, then taken over.
func (s *scaler) execute(ctx context.Context) *scaleOutcome {
	var (
		known            map[string]client.Migration
		takeOver, waited bool
		refusals         int
		verb             = "adopted"
		unlock           func()
	)
	release := func() {
		if unlock != nil {
			unlock()
			unlock = nil
		}
	}
	defer release()
	for {
		if takeOver && unlock == nil {
			unlock = s.prefixLocks.Lock(s.p)
		}
		rec, ok := prefix.Record{}, false
		if s.basis != nil {
			rec, ok, s.basis = *s.basis, true, nil
		} else if rec, ok = s.readPrefix(ctx, false); !ok {
			// What a read-back found this apply's scale started stays
			// recorded without another read.
			return merged(&scaleOutcome{migrations: known}, nil)
		}
		mine := known
		if s.waitOnly && known == nil {
			mine = prefix.ResumedWait(rec, s.target, s.resumed)
		}
		d := prefix.Decide(prefix.Input{Record: rec, Self: s.g, Target: s.target, RollbackOnRevert: s.rollbackOnRevert, WaitOnly: s.waitOnly,
			Known: mine, TakeOver: takeOver, Waited: waited})
		s.noConsumer = d.NoConsumer
		// What this apply's stream scale started (a part-way scale refused
		// with 409 on its client retry included) is recorded whatever stops
		// the apply after it.
		var landed *scaleOutcome
		if m, found := s.landedIn(rec, known, false); s.before != nil {
			if landed = merged(&scaleOutcome{migrations: m}, nil); landed != nil && s.landed == nil {
				s.landed = found
			}
		}
		if s.refused(d) {
			return landed
		}
		switch {
		case d.Done() && landed != nil:
			return landed
		case d.Done():
			return newScaleOutcome()
		case d.Steps[0].Kind == prefix.WaitOthers:
			release()
			if !s.waitForOthers(ctx, d.Steps[0].Blocking) {
				return nil
			}
			waited = true
			continue
		case d.Steps[0].Kind == prefix.StreamScale:
			release()
			if !s.basisHolds(rec) {
				return nil
			}
			s.before = &rec
			// The grace context lets an interrupted scale be settled and
			// recorded in state.
			gctx, done := s.timing.graceContext(ctx, "scale-stream "+s.p)
			defer done()
			ctx = gctx
			out, underWay, refused := s.scaleStream(ctx)
			switch {
			case underWay != nil:
				known, takeOver, verb = underWay, true, "read back after the scale's answer was lost"
			case !refused:
				return out
			case refusals > 0:
				takeOver, verb = true, "recovered"
			default:
				// A first 409 may be our part-way scale or a sibling's
				// migration: decide again from a fresh record.
				refusals++
			}
			continue
		case unlock == nil:
			unlock = s.prefixLocks.Lock(s.p)
			continue
		}
		if d.Sends() && !s.basisHolds(rec) {
			return landed
		}
		return s.runSteps(ctx, rec, d, verb, landed)
	}
}

// readPrefix lists the groups of the stream prefix, in name order (the order
// the coordinator scales them in); first lets the waits' next poll round
// serve the executor's first reading (prefix.Watcher.Join).
func (s *scaler) readPrefix(ctx context.Context, first bool) (prefix.Record, bool) {
	groups, joined, err := []client.Group(nil), false, error(nil)
	if first {
		groups, joined, err = s.watch.Join(ctx)
	}
	if !joined {
		groups, err = s.api.GroupsFor(ctx, groupsOperation)
	}
	if err != nil {
		addAPIError(s.diags, fmt.Sprintf("Failed to list the groups of stream prefix %q", s.p), err, "")
		return prefix.Record{}, false
	}
	rec := prefix.FromListing(groups, s.p)
	if self := rec.Group(s.g); self != nil {
		g := *self
		s.self = &g
	}
	return rec, true
}

// landedIn is the one rule of what this apply's stream scale did, as rec
// shows it: a migration known to be its own, or one to the target of a group
// behind before the scale (any group's, for the read-back of a lost answer);
// the read-back also takes a group behind before and at the target now.
func (s *scaler) landedIn(rec prefix.Record, known map[string]client.Migration, readBack bool) (map[string]client.Migration, []string) {
	underWay := map[string]client.Migration{}
	var found []string
	for _, gi := range rec.Groups {
		m, ok := known[gi.ConsumerGroup]
		if am := prefix.Unfinished(&gi); !ok && am != nil && am.ToShardCount == s.target && (readBack || s.wasBehind(gi.ConsumerGroup)) {
			m, ok = *am, true
		}
		switch {
		case ok:
			underWay[gi.ConsumerGroup] = m
			found = append(found, fmt.Sprintf("group %q has %s", gi.ConsumerGroup, prefix.Describe(&m)))
		case readBack && gi.ShardCount == s.target && s.wasBehind(gi.ConsumerGroup):
			found = append(found, fmt.Sprintf("group %q already has %d shards", gi.ConsumerGroup, s.target))
		}
	}
	return underWay, found
}

func (s *scaler) nothingSent() string {
	if s.landed == nil {
		return "Nothing was sent to the coordinator."
	}
	return fmt.Sprintf("The stream scale this apply sent had been applied, at least in part (%s): its migrations are recorded in "+
		"state, and the next plan waits for them or repairs the prefix. Nothing more was sent.", strings.Join(s.landed, "; "))
}

// basisHolds: the first record was compared with the plan, so a later one in
// which nothing moved except towards the target sends no more than the plan showed.
func (s *scaler) basisHolds(rec prefix.Record) bool {
	if s.first == nil {
		return true
	}
	return refuseStale(s.diags, fmt.Sprintf("Stale plan: the groups of stream prefix %q changed during the apply", s.p), fmt.Sprintf(
		"The apply checked the plan's basis against the prefix (%s), then read it again before its next request, and since then", s.first),
		s.first.Moved(rec, s.target, s.ours(s.p, *s.first, rec)), "Sending more now would make a change nobody reviewed. "+s.nothingSent())
}

func (s *scaler) refused(d prefix.Decision) bool {
	switch {
	case d.Refusal == nil:
		return false
	case d.Refusal.Kind == prefix.WaitOnlyStale:
		gi := d.Refusal.Groups[0]
		refuseStale(s.diags, fmt.Sprintf("Stale plan: the resharding of stream prefix %q this plan waits for is no longer under way", s.p),
			fmt.Sprintf("The plan waits for the migration under way to %d shards and sends no scale, but since then", s.target),
			[]string{fmt.Sprintf("group %q now has %d shards%s", gi.ConsumerGroup, gi.ShardCount, activeMigrationNote(&gi))},
			"Sending a scale now would make a change nobody reviewed, so nothing was sent to the coordinator.")
	default:
		summary, detail := refusalText(s.p, s.target, s.rollbackOnRevert, d.Refusal)
		s.diags.AddError(summary, detail+"\n\n"+s.nothingSent())
	}
	return true
}

// runSteps runs a decision's per-group steps; a failed step's outcome keeps landed.
func (s *scaler) runSteps(ctx context.Context, rec prefix.Record, d prefix.Decision, verb string, landed *scaleOutcome) *scaleOutcome {
	revert := d.Revert
	out := newScaleOutcome()
	var did []string
	// State records what a failed step leaves, so the next plan does not
	// take it for another actor's.
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
			s.note()
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
			mut := s.mutation
			mut.RequestID = s.api.NewRequestID("rollback-migration")
			s.note()
			m, _, err := rollbackSettled(ctx, s.timing, s.api, s.p, gi.ConsumerGroup, am.ReshardingID, mut)
			s.sent()
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

// merged takes nil outcomes and returns nil when neither changed anything;
// neither is waited for yet, so neither waits for a consumer.
func merged(a, b *scaleOutcome) *scaleOutcome {
	out := newScaleOutcome()
	for _, o := range []*scaleOutcome{a, b} {
		if o == nil {
			continue
		}
		for _, g := range slices.Sorted(maps.Keys(o.migrations)) {
			out.track(g, o.migrations[g]) // in name order: previous is the first group's, as the coordinator scales
		}
	}
	if !out.changed() {
		return nil
	}
	return out
}

func orNone(items []string) string {
	if len(items) == 0 {
		return "nothing"
	}
	return strings.Join(items, "; ")
}

// errDiagnosed: a read-back failed and said so in the diagnostics.
var errDiagnosed = errors.New("reported in the diagnostics")

// scaleStream: a lost answer may have landed, and a scale is not idempotent
// while its migration is active, so a failed read-back sends nothing more.
func (s *scaler) scaleStream(ctx context.Context) (out *scaleOutcome, underWay map[string]client.Migration, refused bool) {
	out = newScaleOutcome()
	m := s.mutation
	m.RequestID = s.api.NewRequestID("scale-stream")
	sends := 0
	var lost error
	var landed map[string]client.Migration
	res, _, err := prefix.Settle(ctx, prefix.Mutation[*scaleOutcome]{
		What:      fmt.Sprintf("stream scale of stream prefix %q to %d shards", s.p, s.target),
		RequestID: m.RequestID,
		Send: func(ctx context.Context) (*scaleOutcome, error) {
			unlock := s.prefixLocks.Lock(s.p)
			defer unlock()
			// Journaled under the prefix lock, so a create of the prefix in
			// this apply either precedes the scale or sees it.
			s.note()
			resp, err := s.api.ScaleStream(ctx, s.p, s.target, m)
			s.sent()
			if sends == 0 && provedNotApplied(err) {
				s.plans.strikeScale(s.p)
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
		// Only reads.
		ReadBack: func(ctx context.Context) (*scaleOutcome, bool, error) {
			rec, ok := s.readPrefix(ctx, false)
			if !ok {
				return nil, false, errDiagnosed
			}
			underWay, found := s.landedIn(rec, nil, true)
			if len(found) > 0 {
				s.landed, landed = found, underWay
			}
			return nil, len(found) > 0, nil
		},
	})
	var un *prefix.UnsettledError
	switch {
	case err == nil && landed != nil:
		s.diags.AddWarning(fmt.Sprintf("The answer to the scale of stream prefix %q was lost; the scale had been applied", s.p), fmt.Sprintf("The scale of stream prefix %q to %d shards (request id %s) got no answer from the coordinator itself: %s.\n\n"+
			"The provider read the groups back: %s. So the coordinator had accepted the scale: its migrations are recorded, and no "+
			"second scale is sent.", s.p, s.target, m.RequestID, lostAnswerCause(lost), strings.Join(s.landed, "; ")))
		return nil, landed, false
	case err == nil:
		return res, nil, false
	case errors.As(err, &un) && errors.Is(un.ReadBack, errDiagnosed):
	case errors.As(err, &un) && un.Reason == prefix.LimitReached:
		addAPIError(s.diags, fmt.Sprintf("Failed to scale stream prefix %q to %d shards", s.p, s.target), un.Lost, fmt.Sprintf(
			"The scale's answer was lost %d times, and each time the groups read back showed it had not happened (still %d shards, no "+
				"migration). Nothing was changed. Check the coordinator's health and the proxy in front of it, then run terraform apply again.",
			un.Sends, s.self.ShardCount))
	case client.IsNotSent(err):
		what := fmt.Sprintf("The scale of stream prefix %q to %d shards (request id %s) was not sent: the operation ended first.", s.p, s.target, m.RequestID)
		if errors.As(err, &un) {
			err = un.NotSent
			what = fmt.Sprintf("The scale of stream prefix %q to %d shards (request id %s) was sent, and its answer was lost; reading the "+
				"groups back showed it had not happened (still %d shards, no migration to %d). The operation ended meanwhile, so it "+
				"was not sent again.", s.p, s.target, m.RequestID, s.self.ShardCount, s.target)
		}
		addAPIError(s.diags, fmt.Sprintf("Scale of stream prefix %q to %d shards not sent", s.p, s.target), err, what+
			" Nothing was changed on the coordinator. The next plan shows the same scale again.")
	case client.IsConflict(err, client.CodeActiveMigrationExists):
		tflog.Warn(ctx, "stream scale refused because a migration is active; recovering from the groups' state", map[string]any{"stream_prefix": s.p})
		return nil, nil, true
	default:
		addAPIError(s.diags, fmt.Sprintf("Failed to scale stream prefix %q to %d shards", s.p, s.target), err, scaleErrorHint(err))
	}
	return nil, nil, false
}

// wasBehind: only a group not at the target before the scale proves, by being
// there now, that the scale landed.
func (s *scaler) wasBehind(g string) bool {
	if s.before == nil {
		return g == s.g
	}
	was := s.before.Group(g)
	return was != nil && was.ShardCount != s.target
}

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

// scaleGroup: a scale is not idempotent while its migration is active, so a
// failed read-back sends nothing more.
func (s *scaler) scaleGroup(ctx context.Context, gi client.Group) (*client.Migration, error) {
	m := s.mutation
	m.RequestID = s.api.NewRequestID("scale-group")
	s.note()
	// The grace context lets an interrupted send be settled.
	mctx, done := s.timing.graceContext(ctx, "scale-group "+m.RequestID)
	defer done()
	var read *client.Group
	var answer error
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
		// A 409 ACTIVE_MIGRATION_EXISTS is read back like a lost answer: this
		// scale landing late, or another actor's to the same target, is
		// adopted (CONTRACT §9); one heading elsewhere stays the refusal.
		Lost: func(err error) bool {
			return client.IsAmbiguous(err) || client.IsConflict(err, client.CodeActiveMigrationExists)
		},
		ReadBack: func(ctx context.Context) (*client.Migration, bool, error) {
			var err error
			if read, err = s.api.GetGroup(ctx, s.p, gi.ConsumerGroup); err != nil {
				return nil, false, err
			}
			// PREPARING never moves by itself; the same scale resumes it.
			if am := read.ActiveMigration; am != nil && am.ToShardCount == s.target && am.State != client.MigrationPreparing && !am.Finished() {
				return am, true, nil
			}
			if read.ShardCount == s.target && read.ActiveMigration.Finished() {
				return &client.Migration{ReshardingID: client.NoopReshardingID, FromShardCount: s.target, ToShardCount: s.target, State: client.MigrationDeprecated}, true, nil
			}
			if client.IsConflict(answer, client.CodeActiveMigrationExists) {
				return nil, false, prefix.Decided(answer)
			}
			return nil, false, nil
		},
	})
	if sends <= 1 && provedNotApplied(err) {
		s.plans.strikeScale(s.p)
	}
	var un *prefix.UnsettledError
	if errors.As(err, &un) && un.Reason == prefix.NotSentAgain {
		return nil, fmt.Errorf("the scale of group %q (request id %s) was sent and its answer was lost; the group read back showed it "+
			"had not happened (still %d shards), and it was not sent again: %w", gi.ConsumerGroup, m.RequestID, read.ShardCount, un.NotSent)
	}
	return mig, err
}

// provedNotApplied: a 409 or 503 may follow a part-way scale, so its step
// stays journaled.
func provedNotApplied(err error) bool {
	if err == nil || client.IsAmbiguous(err) {
		return false
	}
	if client.IsNotSent(err) {
		return true
	}
	apiErr, ok := client.AsAPIError(err)
	return ok && slices.Contains([]int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
		http.StatusUnprocessableEntity}, apiErr.HTTPStatus)
}
