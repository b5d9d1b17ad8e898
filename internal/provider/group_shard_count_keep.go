package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// A plan that keeps the count is still a change when the prefix is not at
// it, and prefix.Decide says which, from the prefix as the refresh
// recorded it (prefixSeen, with the group as the refresh read it): the same
// record in Terraform's re-plan during apply, however the prefix moved
// since. The decision is asked first as a wait (Input.WaitOnly, with the
// unfinished wait's migrations the plan resumes, prefix.ResumedWait):
//   - when waiting brings the prefix there and the group's own migration to
//     the count is under way (issue 20: a refresh never reports an
//     unfinished resharding as done), the plan is an update that waits for
//     it and sends no scale (the pending wait, planCheckUnderWay);
//   - when waiting does not (WaitOnlyStale: a split prefix, issue 30 §1: a
//     group at another count, a migration heading elsewhere, one to revert),
//     the plan is an update that runs the decision's steps (a repair,
//     planCheckSplit), and its apply checks the prefix is still as the plan
//     saw it;
//   - a refusal fails the plan in the words the apply would use.
//
// A scale-out whose group has no live consumer, and any migration with
// wait_for = "ACCEPTED", are recorded but not waited on: the next plan would
// otherwise never be empty. A PREPARING migration elsewhere in a prefix at
// the count blocks the next change of the count, not this plan: there is
// nothing to repair (prefix.Record.Split).

// planCheckSplit is resharding.plan_check of a plan that repairs a split
// prefix; Update recognises the repair by it.
const planCheckSplit = "the stream prefix is split (read from the coordinator at the refresh): applying brings every group to this count"

// isSplitRepair reports a planned repair of a split prefix.
func isSplitRepair(resharding types.Object) bool {
	if resharding.IsNull() || resharding.IsUnknown() {
		return false
	}
	v, ok := resharding.Attributes()["plan_check"].(types.String)
	return ok && v.ValueString() == planCheckSplit
}

// planKeep is ModifyPlan's part for a plan that keeps the count: seen is the
// group as the refresh read it, resumed the migrations (group → id) of the
// unfinished wait the plan resumes, if pending. It reports whether it planned
// an update.
func (r *groupShardCountResource) planKeep(ctx context.Context, plan *groupShardCountModel, seen *client.Group, pending bool, resumed map[string]string, private privateGetter, resp *resource.ModifyPlanResponse) bool {
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	target := int32(plan.ShardCount.ValueInt64())
	rec, ok, diags := readPrefixSeen(ctx, private, p)
	resp.Diagnostics.Append(diags...)
	if !ok {
		// No record of the prefix (the refresh could not list it, or an
		// apply since cleared it): the group alone, as the refresh read it.
		rec = prefix.Record{Prefix: p}
	}
	rec = prefix.FromListing(append(rec.Without(g).Groups, *seen), p)
	in := prefix.Input{Record: rec, Self: g, Target: target, RollbackOnRevert: plan.RollbackOnRevert.ValueBool(),
		WaitOnly: true, Known: prefix.ResumedWait(rec, target, resumed)}
	d := prefix.Decide(in)
	switch {
	case d.Refusal == nil:
		return r.planWait(ctx, plan, seen, rec, pending, resp)
	case d.Refusal.Kind != prefix.WaitOnlyStale && len(rec.Split(target)) == 0:
		return false
	}
	return r.planRepair(plan, seen, rec, resp)
}

// planWait plans the wait for the group's own migration to the count.
func (r *groupShardCountResource) planWait(ctx context.Context, plan *groupShardCountModel, seen *client.Group, rec prefix.Record, pending bool, resp *resource.ModifyPlanResponse) bool {
	am := underWayMigration(seen)
	if am == nil || int64(am.ToShardCount) != plan.ShardCount.ValueInt64() || plan.WaitFor.ValueString() != waitForCompletion || prefix.Stalled(seen) {
		return false
	}
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	affected := map[string]attr.Value{}
	for _, gi := range rec.Groups {
		affected[gi.ConsumerGroup] = types.Int64Value(int64(gi.ShardCount))
	}
	since := underWaySince(am)
	waitsFor := underWayWaitsFor(p, seen, am)
	m := reshardingModel{
		FromShardCount:       types.Int64Value(int64(am.FromShardCount)),
		ToShardCount:         types.Int64Value(int64(am.ToShardCount)),
		AffectedGroups:       types.MapValueMust(types.Int64Type, affected),
		MovedKeyPercent:      types.Float64Value(movedKeyPercent(am.FromShardCount, am.ToShardCount)),
		CompletesByItself:    types.BoolValue(true),
		BlockedBy:            types.StringValue(fmt.Sprintf("migration %s (%d→%d shards) is already under way since %s, now %s: it waits for %s", am.ReshardingID, am.FromShardCount, am.ToShardCount, since, am.State, waitsFor)),
		BasisMetadataVersion: types.Int64Value(seen.MetadataVersion),
		PlanCheck:            types.StringValue(planCheckUnderWay),
	}
	plan.Resharding = m.object()
	plan.MigrationIDs = types.MapUnknown(types.StringType)
	plan.MigrationState = types.StringUnknown()
	plan.MetadataVersion = types.Int64Unknown()
	resp.Diagnostics.Append(setPendingWait(ctx, resp.Private, true)...)
	summary := fmt.Sprintf("A resharding of stream prefix %q is already under way", p)
	if pending {
		summary = fmt.Sprintf("Resuming an unfinished resharding wait: a resharding of stream prefix %q is under way", p)
	}
	resp.Diagnostics.AddWarning(summary, fmt.Sprintf(
		"Group %q under stream prefix %q has migration %s (%d→%d shards) under way since %s, now %s: it waits for %s. shard_count is "+
			"already %d, but the resharding has not completed, so this plan is an update: applying it waits until the migration has "+
			"completed, without sending another scale. (Whoever started it: an earlier apply whose answer was lost or that was interrupted, "+
			"or another actor.)", g, p, am.ReshardingID, am.FromShardCount, am.ToShardCount, since, am.State, waitsFor, am.ToShardCount))
	return true
}

// planRepair plans the repair of a split prefix: prefix.Decide's steps, as
// the preview of a change tells them (judge).
func (r *groupShardCountResource) planRepair(plan *groupShardCountModel, seen *client.Group, rec prefix.Record, resp *resource.ModifyPlanResponse) bool {
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
	v := prefixSnapshot{p: p, g: g, target: target, groups: rec.Groups, self: rec.Group(g)}.judge(plan.RollbackOnRevert.ValueBool())
	summary := fmt.Sprintf("Stream prefix %q is split: its groups are not all at %d shards", p, target)
	if v.d.Refusal != nil {
		previewFatal(&resp.Diagnostics, p, target, plan.RollbackOnRevert.ValueBool(), v.d.Refusal, fmt.Sprintf("%s. As the refresh read it: %s. Producers routing by one group's count write "+
			"to shards another group never reads. This plan cannot repair it:\n\n", summary, strings.Join(moves, "; ")))
		return false
	}
	affected := map[string]attr.Value{}
	for _, gi := range rec.Groups {
		affected[gi.ConsumerGroup] = types.Int64Value(int64(gi.ShardCount))
	}
	m := reshardingModel{
		FromShardCount:       types.Int64Value(int64(seen.ShardCount)),
		ToShardCount:         types.Int64Value(int64(target)),
		AffectedGroups:       types.MapValueMust(types.Int64Type, affected),
		MovedKeyPercent:      types.Float64Value(moved),
		CompletesByItself:    types.BoolValue(v.completes()),
		BlockedBy:            types.StringNull(),
		BasisMetadataVersion: types.Int64Value(seen.MetadataVersion),
		PlanCheck:            types.StringValue(planCheckSplit),
	}
	if v.blockedBy != "" {
		m.BlockedBy = types.StringValue(v.blockedBy)
	}
	plan.Resharding = m.object()
	plan.MigrationIDs = types.MapUnknown(types.StringType)
	plan.MigrationState = types.StringUnknown()
	plan.PreviousShardCount = types.Int64Unknown()
	plan.MetadataVersion = types.Int64Unknown()
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
	if v.blockedBy != "" {
		detail += "\n\nThe change " + v.blockedBy + "."
	}
	resp.Diagnostics.AddAttributeWarning(path.Root("shard_count"), summary, detail)
	return true
}

// resumedIDs are the migrations of the unfinished wait a plan resumes (nil
// when none is pending).
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
