package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
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
// (which the re-plan during apply sees too). It reports whether it planned an
// update. A pending wait resumes the migrations of plan.MigrationIDs (the state's).
func (r *groupShardCountResource) planKeep(ctx context.Context, plan *groupShardCountModel, seen *client.Group, pending bool, prior privateRecord, resp *resource.ModifyPlanResponse) bool {
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	target := int32(plan.ShardCount.ValueInt64())
	am := underWayMigration(seen)
	waits := am != nil && am.ToShardCount == target && plan.WaitFor.ValueString() == waitForCompletion
	if r.pd.unconfigured() {
		// The apply-time plan, with the coordinator readable, decides.
		if waits {
			planUpdate(plan, types.ObjectUnknown(reshardingAttrTypes))
			resp.Diagnostics.AddWarning(fmt.Sprintf("A resharding of stream prefix %q may still be under way", p), fmt.Sprintf(
				"When it was last refreshed, group %q under stream prefix %q had migration %s (%d→%d shards) under way, %s. The plan "+
					"cannot read the coordinator to see whether it still is: %s\n\nThe apply reads it first: if the migration is still "+
					"under way, it waits for it to complete, without sending another scale.",
				g, p, am.ReshardingID, am.FromShardCount, am.ToShardCount, am.State, r.pd.unconfiguredDetail()))
		}
		return waits
	}
	rec, ok := prior.prefix(p)
	if !ok {
		// No record of the prefix: the group alone, as the refresh read it.
		rec = prefix.Record{Prefix: p}
	}
	in := prefix.Input{Record: rec.With(*seen), Self: g, Target: target, RollbackOnRevert: plan.RollbackOnRevert.ValueBool()}
	if pending {
		resumed, _ := migrationIDs(ctx, plan.MigrationIDs)
		in.Known = prefix.ResumedWait(in.Record, target, resumed)
	}
	d, wait := prefix.Keep(in)
	in.WaitOnly = wait
	switch {
	case wait && waits && !prefix.Stalled(seen):
		pv := previewOf(in, d, am.FromShardCount, types.Int64Value(seen.MetadataVersion), planCheckUnderWay)
		planUpdate(plan, pv.m.object())
		resp.Diagnostics.Append(setPendingWait(ctx, resp.Private, true)...)
		summary := fmt.Sprintf("A resharding of stream prefix %q is already under way", p)
		if pending {
			summary = fmt.Sprintf("Resuming an unfinished resharding wait: a resharding of stream prefix %q is under way", p)
		}
		detail := fmt.Sprintf("Group %q under stream prefix %q: %s. shard_count is already %d, but the resharding has not completed, "+
			"so this plan is an update: applying it waits until the migration has completed, without sending another scale. (Whoever "+
			"started it: an earlier apply whose answer was lost or that was interrupted, or another actor.)", g, p, underWay(seen, am), target)
		if len(pv.moving) > 0 {
			detail += pv.tail()
		}
		resp.Diagnostics.AddWarning(summary, detail)
		return true
	case wait, !ok:
		// Without the refresh's record the plan cannot show what a repair would send.
		return false
	case d.Refusal != nil && d.Refusal.Kind == prefix.PreparingElsewhere && len(in.Record.Split(target)) == 0:
		// PREPARING elsewhere beside groups at the count: nothing to repair.
		resp.Diagnostics.AddAttributeWarning(path.Root("shard_count"),
			fmt.Sprintf("A PREPARING migration of stream prefix %q blocks its next change of the count", p),
			preparingElsewhereDetail(p, target, d.Refusal.Groups[0]))
		return false
	}
	var moves, steps []string
	for _, gi := range in.Record.Split(target) {
		moves = append(moves, fmt.Sprintf("group %q: %d shards%s", gi.ConsumerGroup, gi.ShardCount, activeMigrationNote(&gi)))
	}
	summary := fmt.Sprintf("Stream prefix %q is split: its groups are not all at %d shards", p, target)
	if d.Refusal != nil {
		previewFatal(&resp.Diagnostics, p, target, plan.RollbackOnRevert.ValueBool(), d.Refusal, fmt.Sprintf("%s. As the refresh read it: %s. Producers routing by one group's count write "+
			"to shards another group never reads. This plan cannot repair it:\n\n", summary, strings.Join(moves, "; ")))
		return false
	}
	pv := previewOf(in, d, seen.ShardCount, types.Int64Value(seen.MetadataVersion), planCheckSplit)
	planUpdate(plan, pv.m.object())
	plan.PreviousShardCount = types.Int64Unknown()
	// The repair sends: a wait it resumed no longer stands.
	resp.Diagnostics.Append(setPendingWait(ctx, resp.Private, false)...)
	for _, st := range d.Steps {
		// What it waits for, resumes or rolls back, the tail tells.
		if st.Kind == prefix.StreamScale {
			steps = append(steps, fmt.Sprintf("one stream-level scale to %d (a noop for the groups already there)", target))
		} else if st.Kind == prefix.ScaleGroup && !st.Resume {
			steps = append(steps, fmt.Sprintf("a per-group scale of group %q", st.Group))
		}
	}
	if len(steps) > 0 {
		steps[0] = ": " + steps[0]
	}
	resp.Diagnostics.AddAttributeWarning(path.Root("shard_count"), summary, fmt.Sprintf("shard_count is %d and group %q has it, but as the "+
		"refresh read the prefix: %s. Producers routing by one group's count write to shards another group never reads, so this plan "+
		"is an update that repairs it%s. Up to %.2f%% of partition keys move in the groups that change.",
		target, g, strings.Join(moves, "; "), strings.Join(steps, ", then "), pv.m.MovedKeyPercent.ValueFloat64())+pv.tail())
	return true
}

// planUpdate plans an update whose outcome the apply records.
func planUpdate(plan *groupShardCountModel, resharding types.Object) {
	plan.Resharding, plan.MetadataVersion = resharding, types.Int64Unknown()
	plan.MigrationIDs, plan.MigrationState = types.MapUnknown(types.StringType), types.StringUnknown()
}

// migrationIDs reads migration_ids (group → migration id); null or unknown is none.
func migrationIDs(ctx context.Context, v types.Map) (map[string]string, diag.Diagnostics) {
	ids := map[string]string{}
	if v.IsNull() || v.IsUnknown() {
		return ids, nil
	}
	return ids, v.ElementsAs(ctx, &ids, false)
}

// planRecreated plans a group this run re-creates: a new lifecycle at
// metadataVersion 1 is no metadata regression. It reports whether it did, and
// sets seen to the group as its create makes it, or nil when the plan cannot
// tell and leaves the outcome to the apply.
func (r *groupShardCountResource) planRecreated(ctx context.Context, plan *groupShardCountModel, seen **client.Group, prior privateRecord, resp *resource.ModifyPlanResponse) bool {
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	created := r.pd.plans.of(p, g).create
	if created == nil {
		return false
	}
	*seen = nil
	plan.MetadataVersion, plan.MigrationState = types.Int64Unknown(), types.StringNull()
	// A pending wait was for the old group's migrations.
	resp.Diagnostics.Append(setPendingWait(ctx, resp.Private, false)...)
	resp.Diagnostics.AddWarning(fmt.Sprintf("Group %s/%s is re-created by this apply", p, g), fmt.Sprintf(
		"This configuration re-creates group %q of stream prefix %q (a replacement). The new group starts a new lifecycle at "+
			"metadataVersion 1, so this shard count resource records it as its metadata baseline once it exists (metadata_version "+
			"is known after apply); that is not a metadata regression. shard_count = %d is kept as for any group, the new one as its "+
			"create makes it: if that leaves the prefix at another count, the apply brings every group of the prefix to shard_count.",
		g, p, plan.ShardCount.ValueInt64()))
	rec, ok := prior.prefix(p)
	n := created.InitialShardCount
	if sib := rec.Without(g).Groups; len(sib) > 0 && len(rec.Without(g).Split(sib[0].ShardCount)) == 0 && (n == nil || sib[0].ShardCount > 0) {
		// The create takes the siblings' one count (a configured count must match it
		// unless they are drained); the re-plan during apply sees the same record.
		c := int64(sib[0].ShardCount)
		n = &c
	}
	if !ok || n == nil || r.pd.unconfigured() {
		planUpdate(plan, types.ObjectUnknown(reshardingAttrTypes))
		plan.PreviousShardCount = types.Int64Unknown()
		return true
	}
	*seen = &client.Group{StreamPrefix: p, ConsumerGroup: g, ShardCount: int32(*n), MetadataVersion: 1, State: client.GroupEmpty}
	return true
}
