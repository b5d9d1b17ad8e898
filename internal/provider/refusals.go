package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// A plan without a refresh compares with the last refresh's record again.
const staleBasisNext = "Run terraform plan again with a refresh (without -refresh=false: a plan without one compares with the " +
	"same old record and is refused again), or record the coordinator's groups first with terraform apply -refresh-only; review " +
	"the new resharding preview, and apply that plan."

// refuseStale is the one refusal of a saved plan whose basis moved (summary
// "Stale plan: …"): what the plan was based on, what changed since, what was
// (not) sent, and staleBasisNext. It adds nothing when nothing changed.
func refuseStale(diags *diag.Diagnostics, summary, basis string, changes []string, sent string) bool {
	if len(changes) == 0 {
		return true
	}
	diags.AddError(summary, fmt.Sprintf("%s: %s. %s\n\n%s", basis, strings.Join(changes, "; "), sent, staleBasisNext))
	return false
}

func refusalText(p string, target int32, rollbackOnRevert bool, r *prefix.Refusal) (summary, detail string) {
	gi := r.Groups[0]
	switch r.Kind {
	case prefix.PreparingElsewhere:
		return fmt.Sprintf("Cannot scale stream prefix %q to %d shards: a PREPARING migration blocks it", p, target), preparingElsewhereDetail(p, target, gi)
	case prefix.StalledElsewhere:
		var migs, groups, calls []string
		for _, gi := range r.Groups {
			migs = append(migs, describeMigration(gi))
			groups = append(groups, fmt.Sprintf("%q", gi.ConsumerGroup))
			calls = append(calls, "POST "+client.RollbackPath(p, gi.ConsumerGroup, gi.ActiveMigration.ReshardingID))
		}
		return fmt.Sprintf("Cannot scale stream prefix %q to %d shards while another resharding is in progress", p, target), fmt.Sprintf(
			"A scale of stream prefix %q to %d shards must wait for %s, a scale-out whose group has no live consumer: it stays ACTIVE "+
				"until a consumer joins, so waiting could only time out. Start a consumer of group %s, or roll the migration back (%s), "+
				"then plan again.", p, target, strings.Join(migs, " and "), strings.Join(groups, " and "), strings.Join(calls, "; "))
	case prefix.BlockedElsewhere:
		detail := blockingMigrationsDetail(p, target, r.Groups)
		if calls := rollbackCalls(p, r.Groups); calls != "" {
			detail += "\n\nWait until they finish (a scale-out finishes once the group's consumers converge; a stalled consumer holds it " +
				"until its lease expires), or roll them back:\n" + calls
		}
		return fmt.Sprintf("Stream prefix %q has a resharding in progress to another shard count", p), detail + "\n\nScaling the other " +
			"groups of the prefix before these would leave it at two shard counts. Run terraform apply again once they are finished."
	}
	return fmt.Sprintf("Stream prefix %q is being resharded away from %d shards", p, target), revertRefusedDetail(p, target, rollbackOnRevert, r.Groups)
}

func preparingElsewhereDetail(p string, target int32, gi client.Group) string {
	am := gi.ActiveMigration
	return fmt.Sprintf("Group %q of stream prefix %q has migration %s (%d→%d shards) in state PREPARING: its shard provisioning "+
		"failed, and a PREPARING migration never moves by itself. The coordinator refuses every other scale of the prefix "+
		"(409 ACTIVE_MIGRATION_EXISTS), even a scale back to %d shards, and cannot roll it back (422 ROLLBACK_NOT_ALLOWED). "+
		"The only way out is its own target: set shard_count = %d (once Redis is healthy), apply, and change the count "+
		"afterwards. The desired count here is %d.", gi.ConsumerGroup, p, am.ReshardingID, am.FromShardCount, am.ToShardCount,
		am.FromShardCount, am.ToShardCount, target)
}

func revertRefusedDetail(p string, target int32, rollbackOnRevert bool, active []client.Group) string {
	anyActive := false
	var cannot []string // why each migration cannot be rolled back to target
	for _, gi := range active {
		am := gi.ActiveMigration
		anyActive = anyActive || am.State == client.MigrationActive
		switch {
		case am.State != client.MigrationActive:
			cannot = append(cannot, fmt.Sprintf("%s is %s, and the coordinator rolls back a migration only while it is ACTIVE", describeMigration(gi), am.State))
		case am.FromShardCount != target:
			cannot = append(cannot, fmt.Sprintf("rolling back %s would take group %q to %d shards, not %d", describeMigration(gi), gi.ConsumerGroup, am.FromShardCount, target))
		}
	}
	// Waiting is described, never recommended: once DRAINING a migration can no
	// longer be rolled back.
	wait := "Waiting for them to finish may not end: a migration finishes only once every live consumer has taken its new " +
		"assignment (a scale-out with no live consumer never does) and a scale-in's removed shards are drained in Redis, for every " +
		"consumer group on them"
	var why string
	switch {
	case len(cannot) == 0 && !rollbackOnRevert:
		why = fmt.Sprintf("Set rollback_on_revert = true to roll them back through Terraform, or roll them back yourself with the calls "+
			"below. %s; once DRAINING it can no longer be rolled back; and after it finishes, the next plan scales back to %d "+
			"shards as a new change, moving the keys a second time.", wait, target)
	case anyActive:
		why = fmt.Sprintf("They cannot all be rolled back: %s. %s. Once they have, apply the new count. Those still ACTIVE can be "+
			"rolled back with:", strings.Join(cannot, "; "), wait)
	default:
		why = fmt.Sprintf("They cannot be rolled back: %s. %s. Once they have, apply the new count.", strings.Join(cannot, "; "), wait)
	}
	return strings.TrimRight(fmt.Sprintf("Stream prefix %q is being resharded away from %d shards. ", p, target)+
		blockingMigrationsDetail(p, target, active)+"\n\n"+why+"\n"+rollbackCalls(p, active), "\n")
}

// The coordinator raises metadataVersion on every change of a group's state,
// consumer churn included, so a saved plan's basis is what the reviewer saw:
// the count, the migration under way and the prefix's counts.

// ours tells this run's own changes of prefix p, from basis to now, from
// another actor's: a group the run created (or is creating) has the run's
// count, one it deleted is gone by its hand, and one its scale moved has the
// count that scale sent. Whatever else moved since the plan is not the run's.
func (pd *providerData) ours(p string, basis, now prefix.Record) func(string) bool {
	return func(g string) bool {
		rg := pd.plans.of(p, g)
		was, is := basis.Group(g), now.Group(g)
		return rg.created != nil || rg.creating || rg.deleted != nil && is == nil ||
			was != nil && is != nil && pd.plans.explains(p, g, int64(was.ShardCount), int64(is.ShardCount))
	}
}

type migrationLookup func(ctx context.Context, p, g, id string) (*client.Migration, error)

// basisChanges lists what changed since seen; regressed reports a lower
// metadataVersion. A version that only moved forward is no change.
func basisChanges(ctx context.Context, lookup migrationLookup, seen, now *client.Group) (changes []string, regressed bool, err error) {
	if now.MetadataVersion < seen.MetadataVersion {
		return nil, true, nil
	}
	changes = prefix.Record{Groups: []client.Group{*seen}}.Changes(prefix.Record{Groups: []client.Group{*now}}, nil)
	// Only the coordinator tells a completed migration from a rolled-back one.
	if was := prefix.Unfinished(seen); was != nil && prefix.Unfinished(now) == nil {
		m, err := lookup(ctx, seen.StreamPrefix, seen.ConsumerGroup, was.ReshardingID)
		switch {
		case client.IsNotFound(err):
			changes = append(changes, fmt.Sprintf("%s, under way at plan time, is no longer known to the coordinator", prefix.Describe(was)))
		case err != nil:
			return nil, false, err
		case m.State != client.MigrationDeprecated:
			changes = append(changes, fmt.Sprintf("%s, under way at plan time, is now %s", prefix.Describe(was), m.State))
		}
	}
	return changes, false, nil
}

// checkGroupBasis refuses a plan whose group changed since seen, the plan's
// refresh of it: at plan time (the re-plan during apply) and before the first send.
func (pd *providerData) checkGroupBasis(ctx context.Context, diags *diag.Diagnostics, p, g string, target int32, seen, now *client.Group) bool {
	if now == nil {
		return refuseStale(diags, fmt.Sprintf("Stale plan: group %s/%s no longer exists", p, g), fmt.Sprintf("The plan was made for group %q of "+
			"stream prefix %q with %d shards (metadataVersion %d)", g, p, seen.ShardCount, seen.MetadataVersion),
			[]string{"the coordinator no longer has the group"}, "Nothing was sent to the coordinator.")
	}
	changes, regressed, err := basisChanges(ctx, pd.api.GetMigration, seen, now)
	switch {
	case err != nil:
		addAPIError(diags, fmt.Sprintf("Cannot check the plan's basis for group %q under stream prefix %q", g, p), err,
			"The group no longer reports the migration the plan saw under way; the provider reads it to tell a completed "+
				"migration from a rolled-back one. Nothing was sent to the coordinator. Fix the cause above, then run the command again.")
		return false
	case regressed:
		addBasisRegression(diags, p, g, seen.MetadataVersion, now)
		return false
	}
	was := ", with no migration under way"
	if am := prefix.Unfinished(seen); am != nil {
		was = ", with " + prefix.Describe(am) + " under way"
	}
	sent := "Applying the plan now would make a change nobody reviewed, so nothing was sent to the coordinator. (A metadataVersion " +
		"that only moved forward, with consumers joining or leaving, does not make a plan stale.)"
	if am := prefix.Unfinished(now); am != nil && am.State == client.MigrationPreparing && am.ToShardCount != target {
		sent += "\n\n" + preparingElsewhereDetail(p, target, *now)
	}
	return refuseStale(diags, fmt.Sprintf("Stale plan: group %s/%s changed since the plan was made", p, g), fmt.Sprintf(
		"The plan for stream prefix %q (to %d shards) was based on group %q having %d shards at metadataVersion %d%s. The "+
			"coordinator now reports %d shards at metadataVersion %d%s", p, target, g, seen.ShardCount, seen.MetadataVersion,
		was, now.ShardCount, now.MetadataVersion, activeMigrationNote(now)), changes, sent)
}

// checkPrefixBasis refuses a plan whose preview listed the groups the
// stream-level scale rescales (basis) when they moved other than by this run.
func (pd *providerData) checkPrefixBasis(diags *diag.Diagnostics, p, self string, target int32, basis, now prefix.Record) bool {
	ours := pd.ours(p, basis, now)
	return refuseStale(diags, fmt.Sprintf("Stale plan: the groups of stream prefix %q changed since the plan was made", p), fmt.Sprintf(
		"The resharding preview of stream prefix %q (to %d shards) lists the groups the stream-level scale rescales as the plan "+
			"read them, and since then", p, target),
		basis.Changes(now, func(g string) bool { return g == self || ours(g) }), "Nothing was sent to the coordinator.")
}

func addBasisRegression(diags *diag.Diagnostics, p, g string, basisVersion int64, group *client.Group) {
	diags.AddError(
		fmt.Sprintf("Metadata of group %s/%s regressed since the plan", p, g),
		fmt.Sprintf("The plan was based on metadataVersion %d of group %q (stream prefix %q), but the coordinator now reports the lower metadataVersion %d "+
			"(shard count %d): the group's metadata was deleted, corrupted, or restored from an old backup. Nothing was sent to the coordinator.\n",
			basisVersion, g, p, group.MetadataVersion, group.ShardCount)+
			fmt.Sprintf(metadataRunbook, basisVersion)+"\n"+
			"Then run `terraform apply -refresh-only` and `terraform plan` again: the plan fails closed until the regression is acknowledged, "+
			"and its error names the acknowledged_metadata_version value that works (or, when none does, `terraform state rm` and import).",
	)
}

// checkPlanBasis refuses a plan whose basis changed; seen is nil for a new resource.
func (r *groupShardCountResource) checkPlanBasis(ctx context.Context, s *scaler, seen, group *client.Group) bool {
	if seen != nil && !r.pd.checkGroupBasis(ctx, s.diags, s.p, s.g, s.target, seen, group) {
		return false
	}
	if s.waitOnly || len(s.planned) < 2 {
		// A wait sends no stream-level scale, and a resumed wait's
		// affected_groups are from before the last change, not this plan's basis.
		return true
	}
	// The stream-level scale rescales the siblings: their counts were reviewed.
	reviewed := prefix.Record{Prefix: s.p, CountsOnly: true}
	for name, c := range s.planned {
		reviewed.Groups = append(reviewed.Groups, client.Group{StreamPrefix: s.p, ConsumerGroup: name, ShardCount: int32(c)})
	}
	var now prefix.Record
	if s.basis != nil {
		now = *s.basis
	} else if rec, ok := s.readPrefix(ctx, false); ok {
		now = rec
	} else {
		return false
	}
	self := ""
	if seen != nil {
		self = s.g
	}
	return r.pd.checkPrefixBasis(s.diags, s.p, self, s.target, reviewed, now)
}

func activeMigrationNote(g *client.Group) string {
	if am := g.ActiveMigration; am != nil && !am.Finished() {
		return fmt.Sprintf(", with migration %s (%d→%d shards) %s", am.ReshardingID, am.FromShardCount, am.ToShardCount, am.State)
	}
	return ""
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
