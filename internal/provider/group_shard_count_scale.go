package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
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
	// plans, when set, is the run's registry: a stream scale is registered
	// there before it is sent (registerScaled, with planned: the prefix's
	// groups as the plan showed them), and a group this run deleted is no
	// longer waited for.
	plans   *planRegistry
	planned map[string]int64
	// waitsForOthers: a stream scale refused (409) for other groups'
	// migrations heading elsewhere waits for them (within the timeout) and
	// is sent again, once (waitedForOthers); otherwise, or at a second
	// refusal, the take-over refuses the prefix at once.
	waitsForOthers, waitedForOthers bool
}

// markScaled registers the prefix as taken to the target by this run
// (planRegistry.registerScaled); the caller holds the prefix lock. A
// take-over or a revert calls it before its first mutation, or when it
// adopts a migration already heading to the target: a refusal before any
// leaves nothing registered.
func (s *scaler) markScaled() {
	if s.plans != nil {
		s.plans.registerScaled(s.p, s.target, s.planned)
	}
}

// createdInRun reports a group of the prefix this run created.
func (s *scaler) createdInRun(g string) bool {
	if s.plans == nil {
		return false
	}
	_, ok := s.plans.createdInRun(s.p)[g]
	return ok
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

// start begins the change, or takes over a migration already under way. It
// returns nil after adding an error diagnostic.
func (s *scaler) start(ctx context.Context) *scaleOutcome {
	group, err := s.api.GetGroup(ctx, s.p, s.g)
	if client.IsNotFound(err) {
		addAPIError(s.diags, fmt.Sprintf("Group %q under stream prefix %q does not exist", s.g, s.p), err,
			"A shard count can only be set on an existing group. Create it with redisstreamcoordinator_group and reference that "+
				"resource's attributes here, so Terraform creates the group first.")
		return nil
	}
	if err != nil {
		addAPIError(s.diags, fmt.Sprintf("Failed to read group %q under stream prefix %q", s.g, s.p), err, "")
		return nil
	}
	s.self = group
	if s.checkBasis != nil && !s.checkBasis(ctx, group) {
		return nil
	}
	if s.waitOnly && (group.ShardCount != s.target || (!group.ActiveMigration.Finished() && group.ActiveMigration.ToShardCount != s.target)) {
		s.refuseWaitOnly(group)
		return nil
	}
	if s.waitOnly && group.ActiveMigration.Finished() {
		return s.resumeFinishedOwn(ctx)
	}
	if am := group.ActiveMigration; am != nil && !am.Finished() {
		switch {
		case am.ToShardCount == s.target:
			return s.takeOver(ctx, "adopted", nil)
		case am.State == client.MigrationPreparing:
			s.diags.AddError(fmt.Sprintf("Cannot scale stream prefix %q to %d shards: a PREPARING migration blocks it", s.p, s.target),
				preparingElsewhereDetail(s.p, s.target, *group)+"\n\nNothing was sent to the coordinator.")
			return nil
		case am.FromShardCount == s.target:
			return s.revert(ctx)
		default:
			if !s.waitForOthers(ctx) {
				return nil
			}
			if group, err = s.api.GetGroup(ctx, s.p, s.g); err != nil {
				addAPIError(s.diags, fmt.Sprintf("Failed to read group %q under stream prefix %q", s.g, s.p), err, "")
				return nil
			}
		}
	}
	out := newScaleOutcome()
	if group.ShardCount == s.target {
		return out
	}

	return s.scaleStream(ctx, out)
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

// takeOver reads every group of the prefix and makes each reach the target:
// it adopts migrations already heading there, resumes a PREPARING one with
// the same target, and scales groups left behind one by one. Migrations
// heading elsewhere block it.
//
// It holds the prefix lock and registers the prefix as scaled by this run
// (registerScaled), as a stream scale does: a create of the prefix in this
// apply comes before it, or after it and brings itself to the target.
//
// underWay are the migrations to the target that an earlier read of the
// prefix saw under way (the read-back of a scale whose answer was lost): a
// group that has reached the target with none active since finished one of
// them in between. It is tracked all the same, so the wait reads its final
// state and state records it, as for a scale whose answer came through. The
// group itself is recorded as this read has it (s.self), not as the earlier
// read did.
func (s *scaler) takeOver(ctx context.Context, verb string, underWay map[string]client.Migration) *scaleOutcome {
	defer s.locks.Lock(s.p)()
	siblings, ok := s.prefixGroups(ctx)
	if !ok || s.refuseBlockedTakeOver(siblings) {
		return nil
	}
	out := newScaleOutcome()
	var done []string
	var blocking []client.Group
	for _, gi := range siblings {
		if gi.ConsumerGroup == s.g {
			self := gi
			s.self = &self
		}
		am := gi.ActiveMigration
		seen, wasUnderWay := underWay[gi.ConsumerGroup]
		switch {
		case am != nil && !am.Finished() && am.ToShardCount == s.target && am.State != client.MigrationPreparing:
			s.markScaled()
			out.track(gi.ConsumerGroup, *am)
			done = append(done, fmt.Sprintf("adopted migration %s of group %q (%d→%d, %s)", am.ReshardingID, gi.ConsumerGroup, am.FromShardCount, am.ToShardCount, am.State))
		case am.Finished() && gi.ShardCount == s.target && wasUnderWay:
			s.markScaled()
			out.track(gi.ConsumerGroup, seen)
			done = append(done, fmt.Sprintf("adopted migration %s of group %q (%d→%d), no longer active since the read-back", seen.ReshardingID, gi.ConsumerGroup, seen.FromShardCount, seen.ToShardCount))
		case am != nil && !am.Finished() && am.ToShardCount != s.target:
			blocking = append(blocking, gi)
		case (am != nil && !am.Finished() || gi.ShardCount != s.target) && s.waitOnly:
			s.refuseWaitOnly(&gi)
			return nil
		case am != nil && !am.Finished() || gi.ShardCount != s.target:
			action := "scaled group %q with the per-group scale endpoint (%s)"
			if am != nil && !am.Finished() {
				action = "resumed group %q's PREPARING migration with the same target (%s)"
			}
			s.markScaled()
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
	if len(blocking) > 0 {
		detail := blockingMigrationsDetail(s.p, s.target, blocking)
		for _, gi := range blocking {
			if gi.ActiveMigration.State == client.MigrationPreparing {
				detail += "\n\n" + preparingElsewhereDetail(s.p, s.target, gi)
			}
		}
		s.diags.AddError(fmt.Sprintf("Stream prefix %q has a resharding in progress to another shard count", s.p),
			detail+"\n\nAlready done: "+orNone(done)+".")
		return nil
	}
	if len(done) > 0 {
		s.diags.AddWarning(fmt.Sprintf("Took over the resharding of stream prefix %q (%s)", s.p, verb), fmt.Sprintf(
			"A stream-level scale to %d shards could not simply be started, so the provider read every group of the prefix and: %s.",
			s.target, strings.Join(done, "; ")))
	}
	return out
}

// revert handles a desired count equal to where the active migration
// started: a rollback when allowed, else an error naming the calls to make.
//
// Like takeOver it holds the prefix lock and registers the prefix as scaled
// to the target; a group this apply created at another count (a replacement
// created before the revert, with the count the prefix had at plan time) is
// brought to the target with the per-group scale once the rollbacks are
// done, so the prefix keeps one count.
func (s *scaler) revert(ctx context.Context) *scaleOutcome {
	defer s.locks.Lock(s.p)()
	siblings, ok := s.prefixGroups(ctx)
	if !ok {
		return nil
	}
	var active []client.Group
	allActive := true
	for _, gi := range siblings {
		if am := gi.ActiveMigration; am != nil && !am.Finished() {
			active = append(active, gi)
			allActive = allActive && am.State == client.MigrationActive && am.FromShardCount == s.target
		}
	}
	if !s.rollbackOnRevert || !allActive {
		s.diags.AddError(fmt.Sprintf("Stream prefix %q is being resharded away from %d shards", s.p, s.target),
			revertRefusedDetail(s.p, s.target, s.rollbackOnRevert, active))
		return nil
	}
	out := newScaleOutcome()
	var rolled []string
	for _, gi := range active {
		am := gi.ActiveMigration
		s.markScaled()
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
	}
	for _, gi := range siblings {
		if !s.createdInRun(gi.ConsumerGroup) || gi.ShardCount == s.target || !gi.ActiveMigration.Finished() {
			continue
		}
		s.markScaled()
		m, err := s.scaleGroup(ctx, gi)
		if err != nil {
			addAPIError(s.diags, fmt.Sprintf("Failed to scale group %q under stream prefix %q to %d shards", gi.ConsumerGroup, s.p, s.target), err,
				fmt.Sprintf("This apply created group %q with %d shards and rolled the prefix back to %d (rolled back: %s), so the provider "+
					"scales the new group to %d with the per-group scale, and that did not take effect: the prefix routes with two shard "+
					"counts until it does. The next plan does not show this scale: send it yourself, POST "+
					"/coord/v1/streams/%s/groups/%s/scale with targetShardCount %d (the redisstreamcoordinator_group_shard_count of the "+
					"prefix is at its count already).", gi.ConsumerGroup, gi.ShardCount, s.target, orNone(rolled), s.target, s.p,
					gi.ConsumerGroup, s.target))
			return nil
		}
		rolled = append(rolled, fmt.Sprintf("group %q, created by this apply with %d shards, scaled to %d (%s)", gi.ConsumerGroup, gi.ShardCount, s.target, m.ReshardingID))
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

// resumeFinishedOwn is a wait-only apply whose own group's migration has
// finished: the wait it resumes covers every group of the prefix, so it waits
// for the migrations still under way to the target in the other groups. A
// group at another count, or heading elsewhere (a migration rolled back, a
// group scaled since), is refused: nothing is sent. A group at the target
// with nothing under way is done, whether it finished the migration the wait
// tracked or was created again since (its old migration is then unknown).
func (s *scaler) resumeFinishedOwn(ctx context.Context) *scaleOutcome {
	siblings, ok := s.prefixGroups(ctx)
	if !ok {
		return nil
	}
	out := newScaleOutcome()
	for _, gi := range siblings {
		am := gi.ActiveMigration
		switch {
		case am != nil && !am.Finished() && am.ToShardCount == s.target && am.State != client.MigrationPreparing:
			out.track(gi.ConsumerGroup, *am)
		case (am == nil || am.Finished()) && gi.ShardCount != s.target && s.resumed[gi.ConsumerGroup] != "":
			// The migration the wait resumes for this group ended away from
			// the target (rolled back): the wait reads it and ends with its
			// own error, which also ends the unfinished wait, so the next
			// plan does not resume (and refuse) again.
			out.track(gi.ConsumerGroup, client.Migration{ReshardingID: s.resumed[gi.ConsumerGroup], ToShardCount: s.target,
				FromShardCount: gi.ShardCount, State: client.MigrationActive})
		case am != nil && !am.Finished(), gi.ShardCount != s.target:
			s.refuseWaitOnly(&gi)
			return nil
		}
	}
	return out
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
