package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// planCheckSplit marks a plan that repairs a split prefix.
const planCheckSplit = "the stream prefix is split (read from the coordinator at the refresh): applying brings every group to this count"

// planKeep plans a kept count while the prefix is not at it: a wait for the
// group's migration or a split prefix's repair, decided on the refresh's record
// (which the re-plan during apply sees too). It reports whether it planned an update.
func (r *groupShardCountResource) planKeep(ctx context.Context, plan *groupShardCountModel, seen *client.Group, pending bool, resumed map[string]string, private privateGetter, resp *resource.ModifyPlanResponse) bool {
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	target := int32(plan.ShardCount.ValueInt64())
	rec, ok, diags := readPrefixSeen(ctx, private, p)
	resp.Diagnostics.Append(diags...)
	if !ok {
		// No record of the prefix: the group alone, as the refresh read it.
		rec = prefix.Record{Prefix: p}
	}
	rec = prefix.FromListing(append(rec.Without(g).Groups, *seen), p)
	d, wait := prefix.Keep(prefix.Input{Record: rec, Self: g, Target: target, RollbackOnRevert: plan.RollbackOnRevert.ValueBool(),
		Known: prefix.ResumedWait(rec, target, resumed)})
	switch {
	case wait:
		return r.planWait(ctx, plan, seen, rec, d, pending, resp)
	case !ok:
		// Without the refresh's record the plan cannot show what a repair would send.
		return false
	case d.Refusal != nil && d.Refusal.Kind == prefix.PreparingElsewhere && len(rec.Split(target)) == 0:
		// PREPARING elsewhere beside groups at the count: nothing to repair.
		resp.Diagnostics.AddAttributeWarning(path.Root("shard_count"),
			fmt.Sprintf("A PREPARING migration of stream prefix %q blocks its next change of the count", p),
			preparingElsewhereDetail(p, target, d.Refusal.Groups[0]))
		return false
	}
	return r.planRepair(ctx, plan, seen, rec, d, resp)
}

func (r *groupShardCountResource) planWait(ctx context.Context, plan *groupShardCountModel, seen *client.Group, rec prefix.Record, d prefix.Decision, pending bool, resp *resource.ModifyPlanResponse) bool {
	am := underWayMigration(seen)
	if am == nil || int64(am.ToShardCount) != plan.ShardCount.ValueInt64() || plan.WaitFor.ValueString() != waitForCompletion || prefix.Stalled(seen) {
		return false
	}
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	since := underWaySince(am)
	waitsFor := underWayWaitsFor(p, seen, am)
	blockedBy := fmt.Sprintf("migration %s (%d→%d shards) is already under way since %s, now %s: it waits for %s", am.ReshardingID, am.FromShardCount, am.ToShardCount, since, am.State, waitsFor)
	m, moving := newResharding(prefix.Input{Record: rec, Self: g, Target: am.ToShardCount}, am.FromShardCount, true, blockedBy,
		types.Int64Value(seen.MetadataVersion), planCheckUnderWay, nil)
	plan.Resharding = m.object()
	plan.MigrationIDs = types.MapUnknown(types.StringType)
	plan.MigrationState = types.StringUnknown()
	plan.MetadataVersion = types.Int64Unknown()
	resp.Diagnostics.Append(setPendingWait(ctx, resp.Private, true)...)
	summary := fmt.Sprintf("A resharding of stream prefix %q is already under way", p)
	if pending {
		summary = fmt.Sprintf("Resuming an unfinished resharding wait: a resharding of stream prefix %q is under way", p)
	}
	detail := fmt.Sprintf(
		"Group %q under stream prefix %q has migration %s (%d→%d shards) under way since %s, now %s: it waits for %s. shard_count is "+
			"already %d, but the resharding has not completed, so this plan is an update: applying it waits until the migration has "+
			"completed, without sending another scale. (Whoever started it: an earlier apply whose answer was lost or that was interrupted, "+
			"or another actor.)", g, p, am.ReshardingID, am.FromShardCount, am.ToShardCount, since, am.State, waitsFor, am.ToShardCount)
	if len(moving) > 0 {
		if len(d.NoConsumer) > 0 {
			blockedBy += fmt.Sprintf("; the scale-out of group(s) %s waits for a consumer", strings.Join(d.NoConsumer, ", "))
		}
		detail += movesByItselfDetail(moving, len(d.NoConsumer) == 0, blockedBy)
	}
	resp.Diagnostics.AddWarning(summary, detail)
	return true
}

func (r *groupShardCountResource) planRepair(ctx context.Context, plan *groupShardCountModel, seen *client.Group, rec prefix.Record, d prefix.Decision, resp *resource.ModifyPlanResponse) bool {
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	target := int32(plan.ShardCount.ValueInt64())
	var moves []string
	moved := 0.0
	for _, gi := range rec.Split(target) {
		moves = append(moves, fmt.Sprintf("group %q: %d shards%s", gi.ConsumerGroup, gi.ShardCount, activeMigrationNote(&gi)))
		if pct := movedKeyPercent(gi.ShardCount, target); pct > moved {
			moved = pct
		}
	}
	in := prefix.Input{Record: rec, Self: g, Target: target}
	v := tell(in, d)
	summary := fmt.Sprintf("Stream prefix %q is split: its groups are not all at %d shards", p, target)
	if v.d.Refusal != nil {
		previewFatal(&resp.Diagnostics, p, target, plan.RollbackOnRevert.ValueBool(), v.d.Refusal, fmt.Sprintf("%s. As the refresh read it: %s. Producers routing by one group's count write "+
			"to shards another group never reads. This plan cannot repair it:\n\n", summary, strings.Join(moves, "; ")))
		return false
	}
	m, moving := newResharding(in, seen.ShardCount, v.completes(), v.blockedBy, types.Int64Value(seen.MetadataVersion), planCheckSplit, nil)
	plan.Resharding = m.object()
	plan.MigrationIDs = types.MapUnknown(types.StringType)
	plan.MigrationState = types.StringUnknown()
	plan.PreviousShardCount = types.Int64Unknown()
	plan.MetadataVersion = types.Int64Unknown()
	// The repair sends: a wait it resumed no longer stands.
	resp.Diagnostics.Append(setPendingWait(ctx, resp.Private, false)...)
	var steps []string
	for _, st := range v.d.Steps {
		switch st.Kind {
		case prefix.StreamScale:
			steps = append(steps, fmt.Sprintf("one stream-level scale to %d (a noop for the groups already there)", target))
		case prefix.ScaleGroup:
			steps = append(steps, fmt.Sprintf("a per-group scale of group %q", st.Group))
		case prefix.Adopt:
			steps = append(steps, fmt.Sprintf("waits for group %q's migration %s", st.Group, st.Migration.ReshardingID))
		case prefix.Rollback:
			steps = append(steps, fmt.Sprintf("rolls back group %q's migration %s (rollback_on_revert)", st.Group, st.Migration.ReshardingID))
		case prefix.WaitOthers:
			steps = append(steps, "waits for the migrations heading elsewhere, then brings every group to the count")
		}
	}
	detail := fmt.Sprintf("shard_count is %d and group %q has it, but as the refresh read the prefix: %s. Producers routing by one "+
		"group's count write to shards another group never reads, so this plan is an update that repairs it: %s. Up to %.2f%% of "+
		"partition keys move in the groups that change.", target, g, strings.Join(moves, "; "), strings.Join(steps, "; then "), moved)
	switch {
	case len(moving) > 0:
		detail += movesByItselfDetail(moving, v.completes(), v.blockedBy)
	case v.blockedBy != "":
		detail += "\n\nThe change " + v.blockedBy + "."
	}
	resp.Diagnostics.AddAttributeWarning(path.Root("shard_count"), summary, detail)
	return true
}

func resumedIDs(ctx context.Context, pending bool, state *groupShardCountModel) map[string]string {
	if !pending || state == nil || state.MigrationIDs.IsNull() || state.MigrationIDs.IsUnknown() {
		return nil
	}
	ids := map[string]string{}
	if state.MigrationIDs.ElementsAs(ctx, &ids, false).HasError() {
		return nil
	}
	return ids
}

// planRecreated plans a group this run re-creates: a new lifecycle at
// metadataVersion 1 is no metadata regression. It returns the group as its
// create makes it, or nil when the plan cannot tell and leaves the outcome to the apply.
func (r *groupShardCountResource) planRecreated(ctx context.Context, plan *groupShardCountModel, created plannedGroupCreate, private privateGetter, resp *resource.ModifyPlanResponse) *client.Group {
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	plan.MetadataVersion, plan.MigrationState = types.Int64Unknown(), types.StringNull()
	// A pending wait was for the old group's migrations.
	resp.Diagnostics.Append(setPendingWait(ctx, resp.Private, false)...)
	resp.Diagnostics.AddWarning(fmt.Sprintf("Group %s/%s is re-created by this apply", p, g), fmt.Sprintf(
		"This configuration re-creates group %q of stream prefix %q (a replacement). The new group starts a new lifecycle at "+
			"metadataVersion 1, so this shard count resource records it as its metadata baseline once it exists (metadata_version "+
			"is known after apply); that is not a metadata regression. shard_count = %d is kept as for any group, the new one as its "+
			"create makes it: if that leaves the prefix at another count, the apply brings every group of the prefix to shard_count.",
		g, p, plan.ShardCount.ValueInt64()))
	rec, ok, diags := readPrefixSeen(ctx, private, p)
	resp.Diagnostics.Append(diags...)
	n := created.InitialShardCount
	if sib := rec.Without(g).Groups; len(sib) > 0 && len(rec.Without(g).Split(sib[0].ShardCount)) == 0 && (n == nil || sib[0].ShardCount > 0) {
		// The create takes the siblings' one count (a configured count must match it
		// unless they are drained); the re-plan during apply sees the same record.
		c := int64(sib[0].ShardCount)
		n = &c
	}
	if !ok || n == nil || r.pd.unconfigured() {
		plan.MigrationIDs, plan.MigrationState = types.MapUnknown(types.StringType), types.StringUnknown()
		plan.PreviousShardCount, plan.Resharding = types.Int64Unknown(), types.ObjectUnknown(reshardingAttrTypes)
		return nil
	}
	return &client.Group{StreamPrefix: p, ConsumerGroup: g, ShardCount: int32(*n), MetadataVersion: 1, State: client.GroupEmpty}
}
