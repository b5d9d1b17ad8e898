package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

// errMigrationEnded ends a wait at once: waiting longer cannot help.
var errMigrationEnded = errors.New("migration ended without completing")

// wait waits until every tracked migration is finished or is a scale-out
// whose group has no live consumer, and reports whether the outcome is settled;
// false means the next apply resumes the wait. An unavailable coordinator gets
// the client's retries and no others: a round that fails after them ends the wait.
func (s *scaler) wait(ctx context.Context, out *scaleOutcome) bool {
	finished := map[string]bool{}
	err := s.awaitMigrations(ctx, out, finished)
	for _, name := range sortedKeys(out.waitingForConsumer) {
		m := out.migrations[name]
		s.diags.AddWarning(fmt.Sprintf("Scale-out of group %q waits for a consumer", name), fmt.Sprintf(
			"Group %q under stream prefix %q has no live consumer, and a scale-out only completes once a consumer joins and takes "+
				"over the new assignment. Migration %s (%d→%d shards) stays ACTIVE until then: producers already route to %d shards, "+
				"and further shard count changes of this prefix are refused (409 ACTIVE_MIGRATION_EXISTS) until it completes or is rolled back.",
			name, s.p, m.ReshardingID, m.FromShardCount, m.ToShardCount, m.ToShardCount))
	}
	// A cut by the wait's own deadline is a timeout; any other failure is reported as itself.
	expired := ctx.Err() != nil || deadlinePassed(ctx) && errors.Is(err, context.DeadlineExceeded)
	switch {
	case err == nil:
		return true
	case errors.Is(err, errMigrationEnded):
		s.diags.AddError(fmt.Sprintf("Resharding of stream prefix %q to %d shards did not complete", s.p, s.target), err.Error())
		return true
	case expired && interrupted(ctx):
		s.diags.AddError(fmt.Sprintf("Interrupted while waiting for the resharding of stream prefix %q to %d shards", s.p, s.target),
			"The coordinator accepted the scale; the operation was interrupted while the migration runs. "+s.describeUnfinished(out, finished)+
				"\n\nThe new shard count and the unfinished migrations are recorded in state: the next terraform plan shows an update, "+
				"and its apply waits for the migration without sending another scale.")
		return false
	case expired:
		s.diags.AddError(fmt.Sprintf("Timed out waiting for the resharding of stream prefix %q to %d shards", s.p, s.target),
			s.describeUnfinished(out, finished)+"\n\nThe new shard count and the unfinished migrations are recorded in state; the next "+
				"terraform apply resumes waiting (the plan shows an update). If migrations legitimately take longer, raise the resource's "+
				"timeouts.")
		return false
	default:
		next := "The scale was accepted, and the next terraform apply resumes waiting without sending another scale, once the cause above is fixed."
		if client.IsTransient(err) || client.IsUnreachable(err) || client.IsRateLimited(err) {
			next = "The scale was accepted. The coordinator stayed unavailable through the provider's retries (max_retries, retry_wait_max): " +
				"once it answers again, the next terraform apply resumes waiting without sending another scale."
		}
		addAPIError(s.diags, fmt.Sprintf("Failed while waiting for the resharding of stream prefix %q to %d shards", s.p, s.target), err, next)
		return false
	}
}

func (s *scaler) awaitMigrations(ctx context.Context, out *scaleOutcome, finished map[string]bool) error {
	seenViolations := map[string]bool{}
	// A revert whose rollback has finished stays ROLLED_BACK while the rest finish.
	keep, awaited := false, map[string]client.Migration{}
	for name, m := range out.migrations {
		if finished[name] = m.Finished(); finished[name] {
			keep = keep || out.state == client.MigrationRolledBack
		} else {
			awaited[name] = m
		}
	}
	wt := s.watch.Watch(ctx, s.p, awaited)
	defer wt.Close()
	for !allDone(out, finished) {
		seen, err := wt.Next(ctx)
		if err != nil {
			return err
		}
		for _, name := range sortedKeys(seen) {
			if _, tracked := out.migrations[name]; !tracked || finished[name] {
				continue
			}
			done, err := s.observe(ctx, out, name, seen[name], seenViolations)
			if err != nil {
				return err
			}
			if _, tracked := out.migrations[name]; !tracked {
				delete(finished, name) // deleted by this apply (observe)
				continue
			}
			finished[name] = done
			if done {
				wt.Forget(name)
			}
		}
		if !keep {
			out.state = aggregateState(out.migrations)
		}
	}
	return nil
}

func allDone(out *scaleOutcome, finished map[string]bool) bool {
	for name := range out.migrations {
		if !finished[name] {
			return false
		}
	}
	return true
}

// Invariant violations (GET .../assignments) are read only for a migration
// that lingers, once per violationsEvery: they explain one that does not finish.
const violationsEvery = 30 * time.Second

// observe applies one round's observation; done means nothing more to wait for.
func (s *scaler) observe(ctx context.Context, out *scaleOutcome, name string, o prefix.Observation, seenViolations map[string]bool) (bool, error) {
	m := out.migrations[name]
	switch {
	case o.Gone || o.Err != nil && client.IsNotFound(o.Err):
		// A delete ends the group's migration (CONTRACT §4.4), and a group created again under the
		// name does not know it (404): nothing left to wait for, and no outage.
		deletedInRun := s.plans.of(s.p, name).deleted != nil
		if name == s.g && !deletedInRun && o.Group == nil {
			return false, fmt.Errorf("%w: group %q disappeared while its migration %s (%d→%d shards) was in progress: someone "+
				"deleted it while this apply waited. If that was intended, remove this shard count resource; otherwise create the "+
				"group again and apply", errMigrationEnded, name, m.ReshardingID, m.FromShardCount, m.ToShardCount)
		}
		if !deletedInRun {
			if err := s.vanishedElsewhere(m, o, name); err != nil {
				return false, err
			}
		}
		tflog.Info(ctx, "group deleted while its migration was awaited; no longer waiting for it", map[string]any{
			"stream_prefix": s.p, "consumer_group": name, "resharding_id": m.ReshardingID,
		})
		// Dropped from state too: a refresh would look for it in a group created again.
		delete(out.migrations, name)
		delete(out.waitingForConsumer, name)
		return true, nil
	case o.Err != nil:
		return false, o.Err
	}
	m = o.Migration
	out.migrations[name] = m
	if name == s.g && o.Group != nil {
		// The listing's record is the group's GET answer.
		g := *o.Group
		s.self, s.selfSinceSend = &g, true
	}
	switch {
	case m.State == client.MigrationRolledBack || m.State == client.MigrationRollingBack:
		return false, fmt.Errorf("%w: migration %s of group %q (%d→%d shards) was rolled back; the group has %d shards again. "+
			"If that was intended, set shard_count = %d; otherwise apply again to scale anew",
			errMigrationEnded, m.ReshardingID, name, m.FromShardCount, m.ToShardCount, o.Group.ShardCount, o.Group.ShardCount)
	case o.Finished && m.State == client.MigrationDeprecated:
		delete(out.waitingForConsumer, name)
		return true, nil
	}
	if violationsCheckDue(o.Waited, seenViolations, name) {
		s.reportViolations(ctx, name, seenViolations)
	}
	if prefix.Stalled(o.Group) {
		out.waitingForConsumer[name] = true
		return true, nil
	}
	delete(out.waitingForConsumer, name)
	return false, nil
}

// violationsCheckDue notes each violationsEvery slot in seen, under a key no
// violation text has (the name and a NUL).
func violationsCheckDue(waited time.Duration, seen map[string]bool, name string) bool {
	if waited < violationsEvery {
		return false
	}
	slot := fmt.Sprintf("%s\x00check\x00%d", name, waited/violationsEvery)
	if seen[slot] {
		return false
	}
	seen[slot] = true
	return true
}

// vanishedElsewhere: a group created again at another count leaves the prefix split, an error.
func (s *scaler) vanishedElsewhere(m client.Migration, o prefix.Observation, name string) error {
	detail := fmt.Sprintf("Migration %s of group %q under stream prefix %q (%d→%d shards) ended with its group: someone deleted the "+
		"group while this apply waited (another workspace's replace or destroy, or an operator), and a delete ends a group's migration; "+
		"a group created again under the name is a new one that does not know it. This apply no longer waits for it; the coordinator "+
		"was available throughout.", m.ReshardingID, name, s.p, m.FromShardCount, m.ToShardCount)
	if o.Group != nil && o.Group.ShardCount != s.target {
		return fmt.Errorf("%w: %s\n\nGroup %q exists again with %d shards, the others have %d: the prefix is split. The next terraform "+
			"plan shows an update of this shard count that brings every group to one count: agree the count with whoever created "+
			"group %q, then run terraform apply", errMigrationEnded, detail, name, o.Group.ShardCount, s.target, name)
	}
	summary := fmt.Sprintf("Group %q was deleted or replaced while this apply waited", name)
	if o.Err == nil {
		s.diags.AddWarning(summary, detail)
		return nil
	}
	addAPIWarning(s.diags, summary, o.Err, detail)
	return nil
}

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

// waitForOthers waits for the prefix's migrations heading to another count, so a new scale is decided after them.
func (s *scaler) waitForOthers(ctx context.Context, blocking []client.Group) bool {
	others := newScaleOutcome()
	for _, gi := range blocking {
		others.track(gi.ConsumerGroup, *gi.ActiveMigration)
	}
	tflog.Info(ctx, "waiting for active migrations of the stream prefix before scaling", map[string]any{"stream_prefix": s.p, "migrations": len(blocking)})
	// The inner wait's diagnostics would describe the other migrations as ours.
	inner := *s
	var scratch diag.Diagnostics
	inner.diags = &scratch
	settled := inner.wait(ctx, others)
	if settled && !scratch.HasError() && len(others.waitingForConsumer) == 0 {
		return true
	}
	detail := blockingMigrationsDetail(s.p, s.target, blocking)
	if len(others.waitingForConsumer) > 0 {
		detail += "\n\nA scale-out among them has no live consumer, so it will not finish by itself: start a consumer, or roll it back:\n" + rollbackCalls(s.p, blocking)
	} else if deadlinePassed(ctx) {
		detail += "\n\nThey did not finish within the timeout. " + inner.describeUnfinished(others, nil)
	}
	s.diags.AddError(fmt.Sprintf("Cannot scale stream prefix %q to %d shards while another resharding is in progress", s.p, s.target), detail)
	return false
}

// deadlinePassed: a poll round cut by the wait's deadline may end before ctx does.
func deadlinePassed(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(d)
}

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
	undrained := fmt.Sprintf("removed shards %s still hold undrained entries (pending or lag in Redis): drain them to let the migration finish",
		shardRange(s.p, m.ToShardCount, m.FromShardCount))
	switch {
	case len(live) == 0 && scaleIn:
		return "no live consumers; " + undrained
	case len(live) == 0:
		return "no live consumers: a scale-out only completes once a consumer joins and converges"
	}
	if a, err := s.api.Assignments(ctx, s.p, name); err == nil && len(a.RevokeProgress) > 0 {
		return "revoke in progress: " + joinEach(sortedKeys(a.RevokeProgress), ", ", func(member string) string {
			return fmt.Sprintf("%s revoking [%s]", member, joinEach(a.RevokeProgress[member], ",", func(id client.ShardID) string { return fmt.Sprint(id.ShardIndex) }))
		})
	}
	if m.State == client.MigrationDraining && scaleIn {
		return undrained
	}
	return fmt.Sprintf("%d live consumer(s) have not yet converged to the new assignment", len(live))
}

func shardRange(p string, from, to int32) string {
	if to-from == 1 {
		return routing.StreamKey(p, int(from))
	}
	return routing.StreamKey(p, int(from)) + ".." + routing.StreamKey(p, int(to-1))
}

// joinEach joins f of each item with sep.
func joinEach[T any](items []T, sep string, f func(T) string) string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = f(it)
	}
	return strings.Join(out, sep)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// roundReader names the Watcher's listings as the waits' poll rounds.
type roundReader struct{ *client.Client }

func (r roundReader) Groups(ctx context.Context) ([]client.Group, error) {
	return r.GroupsFor(ctx, waitGroupsOperation)
}

const waitGroupsOperation = "wait-groups"
