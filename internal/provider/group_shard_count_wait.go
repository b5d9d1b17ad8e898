package provider

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

// Migration polling: first check within ~250 ms, growing to 500 ms, so apply
// returns well within a second of the coordinator marking the migration
// DEPRECATED (BENCHMARKS.md); a 1 s cap let it take up to ~1.1 s. Polls are
// GETs, which the rate limit does not count.
var migrationPoll = client.PollOptions{Initial: 250 * time.Millisecond, Max: 500 * time.Millisecond, Factor: 1.5, MaxConsecutiveErrors: 5}

// errMigrationEnded ends a wait at once: the migration was rolled back or
// its group disappeared. Waiting longer cannot help.
var errMigrationEnded = errors.New("migration ended without completing")

// wait polls every tracked migration until each is finished (DEPRECATED and
// no longer the group's active migration), or is a scale-out that cannot
// finish because its group has no live consumer. It reports whether the
// outcome is settled: false means the next apply should resume the wait.
func (s *scaler) wait(ctx context.Context, out *scaleOutcome) bool {
	seenViolations := map[string]bool{}
	finished := map[string]bool{}
	round := 0
	pace := s.pacer()
	err := client.Poll(ctx, pollOptionsFor(len(out.migrations), pace.clock), func(ctx context.Context) (bool, error) {
		defer func() { round++ }()
		for _, name := range sortedKeys(out.migrations) {
			if finished[name] {
				continue
			}
			done, err := s.observe(ctx, out, name, round, seenViolations)
			if err != nil {
				return false, err
			}
			if _, tracked := out.migrations[name]; !tracked {
				delete(finished, name) // deleted by this apply (observe)
				continue
			}
			finished[name] = done
		}
		out.state = aggregateState(out.migrations)
		return len(finished) == len(out.migrations) && allTrue(finished), nil
	})
	for _, name := range sortedKeys(out.waitingForConsumer) {
		m := out.migrations[name]
		s.diags.AddWarning(fmt.Sprintf("Scale-out of group %q waits for a consumer", name), fmt.Sprintf(
			"Group %q under stream prefix %q has no live consumer, and a scale-out only completes once a consumer joins and takes "+
				"over the new assignment. Migration %s (%d→%d shards) stays ACTIVE until then: producers already route to %d shards, "+
				"and further shard count changes of this prefix are refused (409 ACTIVE_MIGRATION_EXISTS) until it completes or is rolled back.",
			name, s.p, m.ReshardingID, m.FromShardCount, m.ToShardCount, m.ToShardCount))
	}
	switch {
	case err == nil:
		return true
	case errors.Is(err, errMigrationEnded):
		s.diags.AddError(fmt.Sprintf("Resharding of stream prefix %q to %d shards did not complete", s.p, s.target), err.Error())
		return true
	case ctx.Err() != nil && interrupted(ctx):
		s.diags.AddError(fmt.Sprintf("Interrupted while waiting for the resharding of stream prefix %q to %d shards", s.p, s.target),
			"The coordinator accepted the scale; the operation was interrupted while the migration runs. "+s.describeUnfinished(out, finished)+
				"\n\nThe new shard count and the unfinished migrations are recorded in state: the next terraform plan shows an update, "+
				"and its apply waits for the migration without sending another scale.")
		return false
	case ctx.Err() != nil:
		s.diags.AddError(fmt.Sprintf("Timed out waiting for the resharding of stream prefix %q to %d shards", s.p, s.target),
			s.describeUnfinished(out, finished)+"\n\nThe new shard count and the unfinished migrations are recorded in state; the next "+
				"terraform apply resumes waiting (the plan shows an update). If migrations legitimately take longer, raise the resource's "+
				"timeouts.")
		return false
	default:
		addAPIError(s.diags, fmt.Sprintf("Failed while waiting for the resharding of stream prefix %q to %d shards", s.p, s.target), err,
			"The scale was accepted; the next terraform apply resumes waiting.")
		return false
	}
}

// pollOptionsFor spreads the polls of a prefix's migrations: each round
// reads every unfinished group, so the interval grows with their number.
// The pacer, not this schedule, is what bounds the requests per second.
func pollOptionsFor(groups int, clk *pollClock) client.PollOptions {
	o := migrationPoll
	if groups > 1 {
		o.Initial *= time.Duration(groups)
		o.Max *= time.Duration(groups)
	}
	o.Sleep = clk.sleep
	return o
}

// A wait sends at most pollPaceMax reads for its stream prefix in any
// pollPaceWindow, whatever its rounds add up to (group reads, side reads,
// the final read of a finished migration): under 4 requests per second per
// waiting prefix (issue 12). Measured in TestScaleWaitPace.
const (
	pollPaceMax    = 3
	pollPaceWindow = time.Second
)

// pollClock is the time a wait runs on; tests drive a virtual one.
type pollClock struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
}

var realPollClock = &pollClock{now: time.Now, sleep: client.Sleep}

// pacer holds each read of a wait back until it is at most the
// pollPaceMax-th within pollPaceWindow.
type pacer struct {
	clock *pollClock
	sent  []time.Time // the latest sends, at most pollPaceMax
}

func (p *pacer) take(ctx context.Context) error {
	if len(p.sent) == pollPaceMax {
		if d := p.sent[0].Add(pollPaceWindow).Sub(p.clock.now()); d > 0 {
			if err := p.clock.sleep(ctx, d); err != nil {
				return err
			}
		}
		p.sent = p.sent[1:]
	}
	p.sent = append(p.sent, p.clock.now())
	return nil
}

// pacer returns the scaler's pacer, shared by every wait of its prefix (a
// test sets its own, on a virtual clock).
func (s *scaler) pacer() *pacer {
	if s.pace == nil {
		s.pace = &pacer{clock: realPollClock}
	}
	return s.pace
}

// Side reads while waiting: invariant violations are checked every
// violationsEvery rounds, and whether a scale-out has a live consumer every
// membersEvery rounds (and on the first), on top of one group read a round.
const (
	violationsEvery = 4
	membersEvery    = 2
)

// observe checks one group's migration; done means nothing more to wait for.
func (s *scaler) observe(ctx context.Context, out *scaleOutcome, name string, round int, seenViolations map[string]bool) (bool, error) {
	m := out.migrations[name]
	pace := s.pacer()
	if err := pace.take(ctx); err != nil {
		return false, err
	}
	group, err := s.api.GetGroup(ctx, s.p, name)
	if client.IsNotFound(err) && s.deletedInRun(name) {
		return s.untrackDeleted(ctx, out, name), nil
	}
	if client.IsNotFound(err) {
		return false, fmt.Errorf("%w: group %q disappeared while its migration %s (%d→%d) was in progress (deleted out of band?)",
			errMigrationEnded, name, m.ReshardingID, m.FromShardCount, m.ToShardCount)
	}
	if err != nil {
		return false, err
	}
	if am := group.ActiveMigration; am != nil && am.ReshardingID == m.ReshardingID {
		m = *am
	} else {
		// No longer active: read its final state.
		if err := pace.take(ctx); err != nil {
			return false, err
		}
		final, err := s.api.GetMigration(ctx, s.p, name, m.ReshardingID)
		if client.IsNotFound(err) && s.deletedInRun(name) {
			// Deleted and created again by this apply (a replacement): the
			// new group does not know the old one's migration.
			return s.untrackDeleted(ctx, out, name), nil
		}
		if err != nil {
			return false, err
		}
		m = *final
	}
	out.migrations[name] = m
	switch {
	case m.State == client.MigrationRolledBack || m.State == client.MigrationRollingBack:
		return false, fmt.Errorf("%w: migration %s of group %q (%d→%d shards) was rolled back; the group has %d shards again. "+
			"If that was intended, set shard_count = %d; otherwise apply again to scale anew",
			errMigrationEnded, m.ReshardingID, name, m.FromShardCount, m.ToShardCount, group.ShardCount, group.ShardCount)
	case m.State == client.MigrationDeprecated && (group.ActiveMigration == nil || group.ActiveMigration.ReshardingID != m.ReshardingID):
		delete(out.waitingForConsumer, name)
		return true, nil
	}
	if round%violationsEvery == 0 {
		if err := pace.take(ctx); err != nil {
			return false, err
		}
		s.reportViolations(ctx, name, seenViolations)
	}
	if m.State == client.MigrationActive && m.ToShardCount > m.FromShardCount && round%membersEvery == 0 {
		if err := pace.take(ctx); err != nil {
			return false, err
		}
		live, err := liveMembers(ctx, s.api, s.p, name)
		if err != nil {
			return false, err
		}
		if len(live) == 0 {
			out.waitingForConsumer[name] = true
			return true, nil
		}
		delete(out.waitingForConsumer, name)
	}
	return false, nil
}

// untrackDeleted stops waiting for the migration of a group this apply
// deleted (the delete of a replacement or a destroy, sent by this provider
// after the scale rescaled it): its migration ended with the group. It is
// dropped from the migrations recorded in state, whose next refresh would
// otherwise take the migration it no longer finds for a restored group.
func (s *scaler) untrackDeleted(ctx context.Context, out *scaleOutcome, name string) bool {
	m := out.migrations[name]
	tflog.Info(ctx, "group deleted by this apply while its migration was awaited; no longer waiting for it", map[string]any{
		"stream_prefix": s.p, "consumer_group": name, "resharding_id": m.ReshardingID,
	})
	delete(out.migrations, name)
	delete(out.waitingForConsumer, name)
	return true
}

// reportViolations warns, once each, about invariant violations the
// coordinator reports while the migration runs; they are not waited on.
func (s *scaler) reportViolations(ctx context.Context, name string, seen map[string]bool) {
	a, err := s.api.Assignments(ctx, s.p, name)
	if err != nil {
		tflog.Debug(ctx, "could not read assignments for invariant violations", map[string]any{"consumer_group": name, "error": err.Error()})
		return
	}
	for _, v := range a.InvariantViolations {
		if key := name + "\x00" + v; !seen[key] {
			seen[key] = true
			s.diags.AddWarning(fmt.Sprintf("Coordinator reports an invariant violation in group %q", name),
				fmt.Sprintf("While resharding stream prefix %q: %s", s.p, v))
		}
	}
}

// waitForOthers waits for migrations of the prefix that head to another
// count, so a new scale can start after them.
func (s *scaler) waitForOthers(ctx context.Context) bool {
	siblings, ok := s.prefixGroups(ctx)
	if !ok {
		return false
	}
	others := newScaleOutcome()
	var active []client.Group
	for _, gi := range siblings {
		if am := gi.ActiveMigration; am != nil && !am.Finished() {
			if am.State == client.MigrationPreparing && am.ToShardCount != s.target {
				// It never moves by itself: waiting would only time out.
				s.diags.AddError(fmt.Sprintf("Cannot scale stream prefix %q to %d shards: a PREPARING migration blocks it", s.p, s.target),
					preparingElsewhereDetail(s.p, s.target, gi)+"\n\nNothing was sent to the coordinator.")
				return false
			}
			others.track(gi.ConsumerGroup, *am)
			active = append(active, gi)
		}
	}
	tflog.Info(ctx, "waiting for active migrations of the stream prefix before scaling", map[string]any{"stream_prefix": s.p, "migrations": len(active)})
	// The inner wait's own diagnostics describe the other migrations as if
	// they were ours; this function reports them in its own words instead.
	s.pacer() // shared with the inner wait and the scale's own wait after it
	inner := *s
	var scratch diag.Diagnostics
	inner.diags = &scratch
	settled := inner.wait(ctx, others)
	if settled && !scratch.HasError() && len(others.waitingForConsumer) == 0 {
		return true
	}
	detail := blockingMigrationsDetail(s.p, s.target, active)
	if len(others.waitingForConsumer) > 0 {
		detail += "\n\nA scale-out among them has no live consumer, so it will not finish by itself: start a consumer, or roll it back:\n" + rollbackCalls(s.p, active)
	} else if ctx.Err() != nil {
		detail += "\n\nThey did not finish within the timeout. " + inner.describeUnfinished(others, nil)
	}
	s.diags.AddError(fmt.Sprintf("Cannot scale stream prefix %q to %d shards while another resharding is in progress", s.p, s.target), detail)
	return false
}

// describeUnfinished explains, per unfinished migration, what it waits for.
func (s *scaler) describeUnfinished(out *scaleOutcome, finished map[string]bool) string {
	// The operation's context has expired; these reads get a short one.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	for _, name := range sortedKeys(out.migrations) {
		if finished[name] {
			continue
		}
		m := out.migrations[name]
		fmt.Fprintf(&b, "\n  - group %q: migration %s (%d→%d shards) is %s: %s", name, m.ReshardingID, m.FromShardCount, m.ToShardCount, m.State, s.blocker(ctx, name, m))
	}
	return "Unfinished:" + b.String()
}

func (s *scaler) blocker(ctx context.Context, name string, m client.Migration) string {
	if m.State == client.MigrationPreparing {
		return "provisioning of the new shards has not completed; applying again resumes it with the same target"
	}
	live, err := liveMembers(ctx, s.api, s.p, name)
	if err != nil {
		return "could not read its members: " + err.Error()
	}
	scaleIn := m.ToShardCount < m.FromShardCount
	if len(live) == 0 {
		if scaleIn {
			return fmt.Sprintf("no live consumers; removed shards %s still hold undrained entries (pending or lag in Redis): drain them to let the migration finish", shardRange(s.p, m.ToShardCount, m.FromShardCount))
		}
		return "no live consumers: a scale-out only completes once a consumer joins and converges"
	}
	if a, err := s.api.Assignments(ctx, s.p, name); err == nil && len(a.RevokeProgress) > 0 {
		var parts []string
		for _, member := range sortedKeys(a.RevokeProgress) {
			parts = append(parts, fmt.Sprintf("%s revoking %s", member, shardList(a.RevokeProgress[member])))
		}
		return "revoke in progress: " + strings.Join(parts, ", ")
	}
	if m.State == client.MigrationDraining && scaleIn {
		return fmt.Sprintf("removed shards %s still hold undrained entries (pending or lag in Redis): drain them to let the migration finish", shardRange(s.p, m.ToShardCount, m.FromShardCount))
	}
	return fmt.Sprintf("%d live consumer(s) have not yet converged to the new assignment", len(live))
}

func shardRange(p string, from, to int32) string {
	if to-from == 1 {
		return routing.StreamKey(p, int(from))
	}
	return routing.StreamKey(p, int(from)) + ".." + routing.StreamKey(p, int(to-1))
}

func shardList(ids []client.ShardID) string {
	var parts []string
	for _, id := range ids {
		parts = append(parts, fmt.Sprint(id.ShardIndex))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func allTrue(m map[string]bool) bool {
	for _, v := range m {
		if !v {
			return false
		}
	}
	return true
}
