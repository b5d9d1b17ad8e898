package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// ModifyPlan warns about what a shard count change does to producers and to
// sibling groups, and proposes an update when an earlier wait did not finish.
func (r *groupShardCountResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		resp.Diagnostics.AddWarning("Destroy keeps the shard count",
			"Destroying a redisstreamcoordinator_group_shard_count only removes it from Terraform state; the group keeps its current shard count.")
		return
	}
	var plan groupShardCountModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var state *groupShardCountModel
	if !req.State.Raw.IsNull() {
		state = &groupShardCountModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}

	countChanges := state == nil || !plan.ShardCount.Equal(state.ShardCount)
	if state != nil && !countChanges {
		pending, diags := readPendingWait(ctx, req.Private)
		resp.Diagnostics.Append(diags...)
		if pending && plan.WaitFor.ValueString() == waitForCompletion {
			resp.Diagnostics.AddWarning("Resuming an unfinished resharding wait", fmt.Sprintf(
				"The last apply of %s timed out or failed while waiting for migration(s) %s to complete (state %s). "+
					"This apply resumes the wait.", groupID(state.StreamPrefix.ValueString(), state.ConsumerGroup.ValueString()),
				state.MigrationIDs.String(), state.MigrationState.ValueString()))
			markMigrationUnknown(&plan)
			resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
		}
		return
	}
	if state != nil {
		// A new change: the last change's migration details no longer apply.
		markMigrationUnknown(&plan)
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	}
	if r.pd == nil || plan.StreamPrefix.IsUnknown() || plan.ConsumerGroup.IsUnknown() || plan.ShardCount.IsUnknown() {
		return
	}
	r.warnAboutChange(ctx, plan, resp)
}

// warnAboutChange is best effort: plan-time reads may be stale or denied, and
// apply re-checks everything.
func (r *groupShardCountResource) warnAboutChange(ctx context.Context, plan groupShardCountModel, resp *resource.ModifyPlanResponse) {
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	target := plan.ShardCount.ValueInt64()
	groups, err := r.pd.groupsForPlan(ctx)
	if err != nil {
		return
	}
	current := int64(-1)
	var siblings []string
	for _, gi := range groups {
		if gi.StreamPrefix != p {
			continue
		}
		if gi.ConsumerGroup == g {
			current = int64(gi.ShardCount)
			continue
		}
		siblings = append(siblings, fmt.Sprintf("%q (%d shards)", gi.ConsumerGroup, gi.ShardCount))
	}
	if current < 0 || current == target {
		return
	}
	detail := fmt.Sprintf("Group %q under stream prefix %q goes from %d to %d shards. The partition→shard mapping changes: producers "+
		"that cannot tolerate duplicates must be paused (and their retries drained) before applying, then resumed once the migration "+
		"completes and their routing is refreshed. Terraform cannot verify that they were paused.", g, p, current, target)
	if target == 0 {
		detail += " A count of 0 retires every shard: producers refuse to publish until the count is raised again."
	}
	if len(siblings) > 0 {
		detail += fmt.Sprintf("\n\nThe stream-level scale also rescales the other groups of the prefix: %s. Manage one "+
			"redisstreamcoordinator_group_shard_count per stream prefix.", strings.Join(siblings, ", "))
	}
	resp.Diagnostics.AddAttributeWarning(path.Root("shard_count"), fmt.Sprintf("Resharding stream prefix %q", p), detail)
}

func markMigrationUnknown(plan *groupShardCountModel) {
	plan.MigrationIDs = types.MapUnknown(types.StringType)
	plan.MigrationState = types.StringUnknown()
	plan.PreviousShardCount = types.Int64Unknown()
}
