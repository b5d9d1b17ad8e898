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

// A split prefix is drift (issue 30 §1). A shard count belongs to the
// stream prefix: when some of its groups are at another count (a per-group
// scale out of band, a stream scale that failed part-way, a take-over or
// revert interrupted between its per-group calls), producers routing by one
// group's count write to shards another group never reads. The refresh
// records the whole prefix (prefixSeen); a plan whose shard_count is
// unchanged but whose prefix is split is an update: its resharding preview
// lists every group with its count, plan_check says the prefix is split, and
// applying it brings every group to shard_count with the steps prefix.Decide
// gives (a stream scale when nothing is under way, per-group scales while a
// migration is), after checking that the prefix is still as the plan saw it.
// A split the coordinator cannot repair (a PREPARING migration to another
// count; a migration away from the count that may not be rolled back) fails
// the plan with an error that names the way out.

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

// planSplit is ModifyPlan's part, for a plan that keeps the count: seen is
// the group as the refresh read it. It reports whether it planned a repair.
//
// resumed are the migrations (group → id) of an unfinished wait the plan
// would resume: a split made only of those groups' migrations is the wait's
// to report (it reads how they ended), not a repair; a group outside them
// (one that appeared, or was scaled since) makes the plan a repair.
func (r *groupShardCountResource) planSplit(ctx context.Context, plan *groupShardCountModel, seen *client.Group, resumed map[string]string, private privateGetter, resp *resource.ModifyPlanResponse) bool {
	if seen == nil {
		return false
	}
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	rec, ok, diags := readPrefixSeen(ctx, private, p)
	resp.Diagnostics.Append(diags...)
	if !ok {
		return false
	}
	// The record is the refresh's: the same in the plan and in Terraform's
	// re-plan during apply, whatever this run creates or deletes meanwhile
	// (the executor reads the prefix again, and the basis check knows the
	// groups this run deleted or created).
	if self := rec.Group(g); self != nil {
		*self = *seen
	}
	target := int32(plan.ShardCount.ValueInt64())
	split := rec.Split(target)
	if len(split) == 0 {
		return false
	}
	if resumed != nil && waitExplains(split, resumed) {
		return false
	}
	var moves []string
	moved := 0.0
	for _, gi := range split {
		moves = append(moves, fmt.Sprintf("group %q: %d shards%s", gi.ConsumerGroup, gi.ShardCount, activeMigrationNote(&gi)))
		if pct := movedKeyPercent(gi.ShardCount, target); pct > moved {
			moved = pct
		}
	}
	v := prefixSnapshot{p: p, g: g, target: target, groups: rec.Groups, self: rec.Group(g)}.judge(plan.RollbackOnRevert.ValueBool())
	d, completes, blockedBy, fatal := v.d, v.completes(), v.blockedBy, v.fatal
	summary := fmt.Sprintf("Stream prefix %q is split: its groups are not all at %d shards", p, target)
	if fatal != "" {
		// shard_count cannot be reached: the plan fails, as a change of the
		// count that cannot succeed does (previewFatal), naming the way out.
		resp.Diagnostics.AddAttributeError(path.Root("shard_count"), summary, fmt.Sprintf(
			"As the refresh read it: %s. Producers routing by one group's count write to shards another group never reads. "+
				"This plan cannot repair it:\n\n%s\n\nNothing was sent to the coordinator.", strings.Join(moves, "; "), fatal))
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
		CompletesByItself:    types.BoolValue(completes),
		BlockedBy:            types.StringNull(),
		BasisMetadataVersion: types.Int64Value(seen.MetadataVersion),
		PlanCheck:            types.StringValue(planCheckSplit),
	}
	if blockedBy != "" {
		m.BlockedBy = types.StringValue(blockedBy)
	}
	plan.Resharding = m.object()
	plan.MigrationIDs = types.MapUnknown(types.StringType)
	plan.MigrationState = types.StringUnknown()
	plan.PreviousShardCount = types.Int64Unknown()
	plan.MetadataVersion = types.Int64Unknown()
	var steps []string
	for _, st := range d.Steps {
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
	if blockedBy != "" {
		detail += "\n\nThe change " + blockedBy + "."
	}
	resp.Diagnostics.AddAttributeWarning(path.Root("shard_count"), summary, detail)
	return true
}

// waitExplains reports a split made only of the migrations of the wait a
// plan resumes (resumed: group → id): the wait reads how they ended. A group
// of the wait with a migration under way now (a PREPARING one after a
// stream scale that failed part-way, or one heading elsewhere) is not one
// of them, whatever its id: it was started since or cannot be waited for,
// and the apply's decision (prefix.Decide, WaitOnly, which adopts only a
// group of the wait with nothing under way) refuses the wait as stale every
// time: a plan must not promise what its apply refuses.
func waitExplains(split []client.Group, resumed map[string]string) bool {
	for _, gi := range split {
		if resumed[gi.ConsumerGroup] == "" || prefix.Unfinished(&gi) != nil {
			return false
		}
	}
	return true
}

// splitBeyondWait is the refresh's record of the prefix (seen standing for
// group g) split at target by a group the wait for g's own migration (and
// for resumed, an unfinished wait's) cannot bring there: such a plan is a
// repair (planSplit), not a wait (planUnderWay), or its apply would be
// refused as stale again and again.
func splitBeyondWait(ctx context.Context, private privateGetter, seen *client.Group, target int32, resumed map[string]string) bool {
	rec, ok, diags := readPrefixSeen(ctx, private, seen.StreamPrefix)
	if !ok || diags.HasError() {
		return false
	}
	if self := rec.Group(seen.ConsumerGroup); self != nil {
		*self = *seen
	}
	split := rec.Split(target)
	return len(split) > 0 && !waitExplains(split, resumed)
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
