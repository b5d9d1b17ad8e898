package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// A group that this configuration re-creates (a `-replace`, or a change that
// forces replacement, of a redisstreamcoordinator_group with
// deletion_policy = "DELETE") starts a new lifecycle at metadataVersion 1,
// lower than the high-water mark this shard count resource recorded for the
// old group. That is the provider's own replacement, not a metadata
// regression: when this run plans the group's create (plan registry) and the
// shard count keeps its count, the plan is an update that records the new
// group's version as the metadata guard's new baseline once the group
// exists (the shard count depends on the group when it references its
// attributes, so it is applied after the create). Nothing is sent to the
// coordinator.

// Update recognises such an update by the same record of the run's creates
// (Terraform plans the shard count again during apply, in the process that
// applies it), and by no pending wait (a wait planned before the group's
// create was registered stays a wait).

// planGroupRecreated is ModifyPlan's part: it reports whether it planned the
// update.
func (r *groupShardCountResource) planGroupRecreated(ctx context.Context, plan *groupShardCountModel, state groupShardCountModel, private privateGetter, resp *resource.ModifyPlanResponse) bool {
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	if !plan.StreamPrefix.Equal(state.StreamPrefix) || !plan.ConsumerGroup.Equal(state.ConsumerGroup) {
		return false
	}
	created := r.pd.plans.of(p, g).create
	if created == nil {
		return false
	}
	plan.MetadataVersion = types.Int64Unknown()
	// The new group has none of the old one's migrations: migration_state
	// is cleared at apply, so no later refresh looks one up and takes the
	// 404 for a restore (group_part_not_found.go).
	plan.MigrationState = types.StringUnknown()
	target := int32(plan.ShardCount.ValueInt64())
	then := "Nothing is sent to the coordinator for it: it is created with shard_count = %d, and the prefix has it."
	pending, diags := readPendingWait(ctx, private)
	resp.Diagnostics.Append(diags...)
	// The planned update is this one, not a wait (Update tells them apart
	// by the pending wait, which this clears).
	resp.Diagnostics.Append(setPendingWait(ctx, resp.Private, false)...)
	// A pending wait was for the old group's migrations: the record of
	// the last change is the executor's to settle afresh.
	if pending || r.recreatedMayScale(ctx, p, g, target, *created, private) {
		// The new group may be created with another count, or the prefix
		// is split: the apply brings every group to shard_count, as the
		// repair of a split prefix does, and its record is known after
		// apply: state must never claim a count a group does not have.
		plan.MigrationIDs = types.MapUnknown(types.StringType)
		plan.PreviousShardCount = types.Int64Unknown()
		plan.Resharding = types.ObjectUnknown(reshardingAttrTypes)
		then = "It may be created with another count than shard_count = %d (it inherits its siblings' count), or the prefix is " +
			"split: once it exists, the apply brings every group of the prefix to shard_count, as the repair of a split prefix does."
	}
	resp.Diagnostics.AddWarning(fmt.Sprintf("Group %s/%s is re-created by this apply", p, g), fmt.Sprintf(
		"This configuration re-creates group %q of stream prefix %q (a replacement). The new group starts a new lifecycle at "+
			"metadataVersion 1, so this shard count resource records the new group's version as its metadata baseline once the group "+
			"exists (metadata_version is known after apply); that is not a metadata regression. "+then, g, p, target))
	return true
}

// recreatedMayScale reports a re-created group whose prefix may not be at
// target once it exists: its planned count (initial_shard_count, or its
// siblings' one count when unset) is not target, or a sibling is not there,
// as the refresh recorded the prefix (no record: it may).
func (r *groupShardCountResource) recreatedMayScale(ctx context.Context, p, g string, target int32, created plannedGroupCreate, private privateGetter) bool {
	rec, ok, diags := readPrefixSeen(ctx, private, p)
	if !ok || diags.HasError() {
		return true
	}
	siblings := rec.Without(g)
	if len(siblings.Split(target)) > 0 {
		return true
	}
	if created.InitialShardCount != nil {
		return int32(*created.InitialShardCount) != target
	}
	// Unset: the create takes the siblings' count, all at target here; a
	// prefix with no other group takes the coordinator's default.
	return len(siblings.Groups) == 0
}

// applyGroupRecreated is Update's part: the group as it exists now is the new
// baseline. It reports whether it handled the update.
func (r *groupShardCountResource) applyGroupRecreated(ctx context.Context, plan, state groupShardCountModel, resp *resource.UpdateResponse) bool {
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	if !plan.StreamPrefix.Equal(state.StreamPrefix) || !plan.ConsumerGroup.Equal(state.ConsumerGroup) || r.pd.plans.of(p, g).create == nil {
		return false
	}
	group, err := r.pd.api.GetGroup(ctx, p, g)
	if err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Failed to read the re-created group %q under stream prefix %q", g, p), err,
			"Nothing was sent to the coordinator. Run terraform apply -refresh-only once the group exists, then plan again.")
		return true
	}
	resp.Diagnostics.Append(recordNewLifecycle(ctx, resp.Private, group)...)
	if plan.MigrationIDs.IsUnknown() {
		// The plan said the prefix may not be at shard_count once the
		// group exists (recreatedMayScale): the executor brings it there,
		// from the prefix as it is now (the new group's lifecycle is the
		// basis: nothing of the old group's is checked), and settles what
		// the plan left unknown.
		timeout, diags := plan.Timeouts.Update(ctx, defaultScaleTimeout)
		resp.Diagnostics.Append(diags...)
		if resp.Diagnostics.HasError() {
			return true
		}
		r.apply(ctx, timeout, plan, nil, nil, &resp.State, resp.Private, &resp.Diagnostics)
		return true
	}
	if plan.MetadataVersion.IsUnknown() {
		plan.MetadataVersion = types.Int64Value(group.MetadataVersion)
	}
	if plan.MigrationState.IsUnknown() {
		plan.MigrationState = types.StringNull() // the new group has none of the old one's migrations
	}
	resp.Diagnostics.Append(setState(ctx, &resp.State, &plan)...)
	return true
}

// recordNewLifecycle makes group the metadata guard's new baseline.
func recordNewLifecycle(ctx context.Context, private privateSetter, group *client.Group) diag.Diagnostics {
	var diags diag.Diagnostics
	diags.Append(setMetadataRegression(ctx, private, nil)...)
	diags.Append(setGroupSeen(ctx, private, group)...)
	mark := markOf(group)
	diags.Append(setEpochsSeen(ctx, private, &mark)...)
	return diags
}
