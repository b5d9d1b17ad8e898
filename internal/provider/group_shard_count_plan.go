package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// ModifyPlan fills the resharding preview and the basis a saved plan is checked against at apply.
func (r *groupShardCountResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		resp.Diagnostics.AddWarning("Destroy keeps the shard count",
			"Destroying a redisstreamcoordinator_group_shard_count only removes it from Terraform state; the group keeps its current shard count.")
		return
	}
	// Read the import mark before clearing it: the planned private state may be the prior one.
	importing, diags := readImportRead(ctx, req.Private, r.pd)
	resp.Diagnostics.Append(diags...)
	clearImportRead(ctx, req, resp)
	var plan groupShardCountModel
	resp.Diagnostics.Append(getPlan(ctx, req.Plan, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var state *groupShardCountModel
	if !req.State.Raw.IsNull() {
		state = &groupShardCountModel{}
		resp.Diagnostics.Append(getState(ctx, req.State, state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	known := !plan.StreamPrefix.IsUnknown() && !plan.ConsumerGroup.IsUnknown() && !plan.ShardCount.IsUnknown()
	if r.pd != nil && known {
		r.checkOnePerPrefix(plan, resp)
	}
	var reg *metadataRegression
	if state != nil {
		reg = r.checkMetadataRegression(ctx, req, plan, *state, resp)
	}
	if resp.Diagnostics.HasError() {
		return
	}

	pending := false
	if state != nil {
		var diags diag.Diagnostics
		pending, diags = readPendingWait(ctx, req.Private)
		resp.Diagnostics.Append(diags...)
	}
	countChanges := state == nil || !plan.ShardCount.Equal(state.ShardCount)
	if state != nil && !countChanges {
		plan.ID, plan.MigrationIDs, plan.MigrationState, plan.PreviousShardCount = state.ID, state.MigrationIDs, state.MigrationState, state.PreviousShardCount
		plan.MetadataVersion, plan.Resharding = state.MetadataVersion, state.Resharding
		if reg != nil {
			// Acknowledged: the baseline until the next refresh raises it to the coordinator's.
			plan.MetadataVersion = plan.AckMetadataVersion
		}
		var seen *client.Group
		if r.pd != nil && known && plan.StreamPrefix.Equal(state.StreamPrefix) && plan.ConsumerGroup.Equal(state.ConsumerGroup) {
			var diags diag.Diagnostics
			seen, diags = readGroupSeen(ctx, req.Private)
			resp.Diagnostics.Append(diags...)
			if created := r.pd.plans.of(plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()).create; created != nil {
				seen, pending = r.planRecreated(ctx, &plan, *created, req.Private, resp), false
			}
		}
		if known && planUnderWayUnconfigured(r.pd, &plan, seen, &resp.Diagnostics) {
			resp.Diagnostics.Append(setPlan(ctx, &resp.Plan, &plan)...)
			return
		}
		if importing && importPlansNothing(ctx, resp.Plan, &plan, req.State) {
			warnUnderWayAtImport(plan, seen, resp)
		} else if !r.pd.unconfigured() && known {
			if seen != nil && r.planKeep(ctx, &plan, seen, pending, resumedIDs(ctx, pending, state), req.Private, resp) {
				resp.Diagnostics.Append(setPlan(ctx, &resp.Plan, &plan)...)
				return
			}
		}
		if pending {
			// The apply records the migrations as it finds them, which may differ from the refresh's.
			next := "This apply resumes the wait."
			if plan.WaitFor.ValueString() == waitForAccepted {
				next = `With wait_for = "ACCEPTED", this apply does not wait: it records the migrations' state as it finds them.`
			}
			resp.Diagnostics.AddWarning("Resuming an unfinished resharding wait", fmt.Sprintf(
				"The last apply of %s timed out or failed while waiting for migration(s) %s to complete (state %s). %s",
				groupID(state.StreamPrefix.ValueString(), state.ConsumerGroup.ValueString()),
				state.MigrationIDs.String(), state.MigrationState.ValueString(), next))
			plan.MigrationState = types.StringUnknown()
			plan.MetadataVersion = types.Int64Unknown()
			plan.Resharding = withOutcomeUnknown(plan.Resharding)
		}
		resp.Diagnostics.Append(setPlan(ctx, &resp.Plan, &plan)...)
		return
	}

	plan.ID = types.StringUnknown()
	if known {
		plan.ID = types.StringValue(groupID(plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()))
	}
	plan.MigrationIDs = types.MapUnknown(types.StringType)
	plan.MigrationState = types.StringUnknown()
	plan.PreviousShardCount = types.Int64Unknown()
	plan.MetadataVersion = types.Int64Unknown()
	plan.Resharding = types.ObjectUnknown(reshardingAttrTypes)
	switch {
	case r.pd != nil && len(r.pd.configUnknown) > 0:
		// Terraform re-plans during apply with the provider configured: a value
		// known now would have to match that plan's.
		resp.Diagnostics.AddWarning("Shard count change not checked at plan time", "The resharding preview of "+
			groupID(plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString())+" is known only after apply. "+r.pd.unknownConfigDetail())
	case r.pd != nil && known:
		var seen *client.Group
		var refreshed *prefix.Record
		if state != nil && plan.StreamPrefix.Equal(state.StreamPrefix) && plan.ConsumerGroup.Equal(state.ConsumerGroup) {
			var diags diag.Diagnostics
			seen, diags = readGroupSeen(ctx, req.Private)
			resp.Diagnostics.Append(diags...)
			rec, ok, diags := readPrefixSeen(ctx, req.Private, plan.StreamPrefix.ValueString())
			resp.Diagnostics.Append(diags...)
			if ok {
				refreshed = &rec
			}
		}
		r.preview(ctx, &plan, seen, refreshed, reg, resp)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(setPlan(ctx, &resp.Plan, &plan)...)
}

// importPlansNothing reports an import's plan that changes no attribute. Any
// other import plan is re-planned during apply in another provider instance,
// which must reproduce it, so it is planned like any other.
func importPlansNothing(ctx context.Context, planned tfsdk.Plan, plan *groupShardCountModel, state tfsdk.State) bool {
	trial := planned
	if setPlan(ctx, &trial, plan).HasError() {
		return true
	}
	return trial.Raw.Equal(state.Raw)
}

func (r *groupShardCountResource) checkMetadataRegression(ctx context.Context, req resource.ModifyPlanRequest, plan, state groupShardCountModel, resp *resource.ModifyPlanResponse) *metadataRegression {
	reg, diags := readMetadataRegression(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	checkMetadataRegression(&resp.Diagnostics, "redisstreamcoordinator_group_shard_count", state.StreamPrefix.ValueString(),
		state.ConsumerGroup.ValueString(), reg, plan.AckMetadataVersion)
	return reg
}

// checkOnePerPrefix fails the plan when two resources manage one stream prefix's shard count.
func (r *groupShardCountResource) checkOnePerPrefix(plan groupShardCountModel, resp *resource.ModifyPlanResponse) {
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	groups := dedupeSorted(r.pd.plans.registerShardCount(p, g))
	if len(groups) < 2 {
		return
	}
	quoted := make([]string, len(groups))
	for i, name := range groups {
		quoted[i] = fmt.Sprintf("%q", name)
	}
	resp.Diagnostics.AddAttributeError(path.Root("stream_prefix"), fmt.Sprintf("Stream prefix %q has more than one shard count resource", p),
		fmt.Sprintf("This configuration declares redisstreamcoordinator_group_shard_count resources for groups %s, all under stream prefix %q. "+
			"The coordinator scales a stream prefix as a whole (every group of the prefix gets the new count), so two resources "+
			"would race: one scales, the other is refused with 409 ACTIVE_MIGRATION_EXISTS or scales the prefix back.\n\n"+
			"Keep one redisstreamcoordinator_group_shard_count per stream prefix (on any one of its groups) and remove the others "+
			"(removing one only forgets it; the groups keep their counts).", strings.Join(quoted, ", "), p))
}

func dedupeSorted(names []string) []string {
	var out []string
	for i, n := range names {
		if i == 0 || names[i-1] != n {
			out = append(out, n)
		}
	}
	return out
}

// preview fills the planned resharding values or fails the plan. The re-plan
// during apply must reproduce them, so they come from the refresh's records
// (seen, refreshed), and a newer read that differs fails the plan as stale.
func (r *groupShardCountResource) preview(ctx context.Context, plan *groupShardCountModel, seen *client.Group, refreshed *prefix.Record, reg *metadataRegression, resp *resource.ModifyPlanResponse) {
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	target := int32(plan.ShardCount.ValueInt64())
	all, err := r.pd.groupsForPlan(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Cannot plan the shard count of group %q under stream prefix %q: listing the coordinator's groups failed", g, p), err,
			"The plan reads the prefix's groups (GET /coord/v1/monitoring/groups, which the READ role allows) to show the resharding "+
				"it causes and to refuse changes that cannot succeed; without that read the plan cannot be trusted, so it fails. "+
				"Fix the cause above and plan again.")
		return
	}
	// The re-plan during apply must see the prefix as planned: groups this run
	// created are left out, groups it deleted put back.
	rec := withDeletedInRun(&r.pd.plans, withoutPlannedCreates(&r.pd.plans, prefix.FromListing(all, p), g), g, refreshed)
	run := r.pd.plans.of(p, g)
	createdHere := run.create != nil
	if seen != nil && !createdHere && run.deleted == nil {
		// A replaced group is planned as created: the re-plan during apply no longer finds the old one.
		if !r.pd.checkGroupBasis(ctx, &resp.Diagnostics, p, g, target, seen, rec.Group(g)) {
			return
		}
		rec = rec.With(*seen)
		if refreshed != nil && !r.pd.checkPrefixBasis(&resp.Diagnostics, p, g, target, *refreshed, rec) {
			return
		}
	}
	check := planCheckRead
	from := int32(-1)
	extra := map[string]int32{}
	basis := types.Int64Null()
	if createdHere {
		// The re-plan during apply, after the group exists, must describe it the same way.
		rec = rec.Without(g)
	}
	self := rec.Group(g)
	in := prefix.Input{Record: rec, Self: g, Target: target, RollbackOnRevert: plan.RollbackOnRevert.ValueBool()}
	switch {
	case self != nil && !createdHere:
		from = self.ShardCount
		if am := self.ActiveMigration; !am.Finished() && am.ToShardCount == target {
			// The count switched when the migration was accepted.
			from = am.FromShardCount
		}
		basis = types.Int64Value(self.MetadataVersion)
	default:
		if !createdHere {
			resp.Diagnostics.AddAttributeError(path.Root("consumer_group"), fmt.Sprintf("Group %q under stream prefix %q does not exist", g, p), fmt.Sprintf(
				"The coordinator has no group %q under stream prefix %q (groups of the prefix: %s), and this configuration does not create it. "+
					"A shard count can only be set on an existing group. Check the names (they are case-sensitive), or create the group "+
					"with redisstreamcoordinator_group and reference that resource's attributes here "+
					"(stream_prefix = redisstreamcoordinator_group.<name>.stream_prefix, consumer_group = redisstreamcoordinator_group.<name>.consumer_group), "+
					"so Terraform plans and creates the group first.", g, p, groupNames(rec.Groups)))
			return
		}
		check = planCheckGroupCreated
		if run.create.InitialShardCount != nil {
			from = int32(*run.create.InitialShardCount)
			extra[g] = from
		}
	}
	v := tell(in, prefix.Decide(in))
	if from == target && (self == nil || self.ActiveMigration.Finished()) && v.d.AdoptsOnly() {
		// Nothing will be sent (siblings at another count would be, and take the
		// preview below). A sibling's migration to the count is taken over by the
		// apply, which alone learns its ids and state.
		if seen == nil {
			// A new resource (below): the apply may find a change to make.
			return
		}
		plan.Resharding = reshardingNull()
		plan.PreviousShardCount = types.Int64Null()
		plan.MigrationIDs = types.MapValueMust(types.StringType, nil)
		plan.MigrationState = types.StringNull()
		if len(v.d.Steps) > 0 {
			plan.MigrationIDs = types.MapUnknown(types.StringType)
			plan.MigrationState = types.StringUnknown()
		}
		if self != nil {
			plan.MetadataVersion = basis
		}
		return
	}
	largeShardCountWarning(&resp.Diagnostics, "shard_count", int64(target), fmt.Sprintf("Stream prefix %q is scaled to", p))
	completes, blockedBy := v.completes(), v.blockedBy
	if v.d.Refusal != nil {
		previewFatal(&resp.Diagnostics, p, target, plan.RollbackOnRevert.ValueBool(), v.d.Refusal, "")
		return
	}
	if self == nil {
		// A new group has no consumers: a scale-out of it waits for one.
		if from < 0 || target > from {
			completes = false
			blockedBy = joinClauses(blockedBy, fmt.Sprintf("group %q is created in this apply and has no consumers yet: a scale-out "+
				"stays ACTIVE until a consumer joins (create the group first, start its consumers, then scale)", g))
		}
	}
	if seen == nil {
		// A new resource is re-planned during apply from a fresh read, with no prior
		// state or private data, so the preview stays unknown; the warning shows the
		// prefix as read now.
		r.warnAboutChange(ctx, in, from, completes, blockedBy, nil, true, resp)
		if am := prefix.Unfinished(self); am != nil && am.ToShardCount == target {
			resp.Diagnostics.AddAttributeWarning(path.Root("shard_count"), fmt.Sprintf("Resharding of stream prefix %q already under way", p),
				fmt.Sprintf("Group %q of stream prefix %q has %s under way, already heading to the configured count: the apply takes it "+
					"over and sends no scale for it.", g, p, prefix.Describe(am)))
		}
		return
	}
	m, moving := newResharding(in, from, completes, blockedBy, basis, check, extra)
	if from >= 0 {
		plan.PreviousShardCount = types.Int64Value(int64(from))
	}
	plan.Resharding = m.object()
	r.warnAboutChange(ctx, in, from, completes, blockedBy, moving, false, resp)
}

// withOutcomeUnknown leaves completes_by_itself and blocked_by to the apply.
func withOutcomeUnknown(resharding types.Object) types.Object {
	if resharding.IsNull() || resharding.IsUnknown() {
		return resharding
	}
	attrs := map[string]attr.Value{}
	for k, v := range resharding.Attributes() {
		attrs[k] = v
	}
	attrs["completes_by_itself"], attrs["blocked_by"] = types.BoolUnknown(), types.StringUnknown()
	return types.ObjectValueMust(reshardingAttrTypes, attrs)
}

func joinClauses(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func groupNames(groups []client.Group) string {
	if len(groups) == 0 {
		return "none"
	}
	names := make([]string, len(groups))
	for i, gi := range groups {
		names[i] = fmt.Sprintf("%q", gi.ConsumerGroup)
	}
	return strings.Join(names, ", ")
}

// warnAboutChange adds what producers must do, which the plan values cannot say.
func (r *groupShardCountResource) warnAboutChange(ctx context.Context, in prefix.Input, from int32, completes bool, blockedBy string, moving []string, newResource bool, resp *resource.ModifyPlanResponse) {
	const readAtPlan = "\n\nThis is the prefix as read at plan time. The resharding values are known after apply: Terraform plans a new " +
		"resource again when it applies, and the apply scales from the counts it finds then."
	if from < 0 {
		if len(moving) > 0 {
			resp.Diagnostics.AddAttributeWarning(path.Root("shard_count"), fmt.Sprintf("Resharding stream prefix %q", in.Record.Prefix),
				fmt.Sprintf("Stream prefix %q is scaled to %d shards.", in.Record.Prefix, in.Target)+movesByItselfDetail(moving, completes, blockedBy))
		}
		return
	}
	detail := fmt.Sprintf("Group %q under stream prefix %q goes from %d to %d shards. The partition→shard mapping changes: %.2f%% of partition keys move to another shard. "+
		"Producers that cannot tolerate duplicates must be paused (and their retries drained) before applying, then resumed once the "+
		"migration completes and their routing is refreshed. Terraform cannot verify that they were paused.",
		in.Self, in.Record.Prefix, from, in.Target, movedKeyPercent(from, in.Target))
	if in.Target == 0 {
		detail += " A count of 0 retires every shard: producers refuse to publish until the count is raised again."
	}
	var siblings []string
	for _, gi := range in.Record.Groups {
		if gi.ConsumerGroup != in.Self {
			siblings = append(siblings, fmt.Sprintf("%q (%d shards)", gi.ConsumerGroup, gi.ShardCount))
		}
	}
	if len(siblings) > 0 {
		detail += fmt.Sprintf("\n\nThe stream-level scale also rescales the other groups of the prefix: %s.", strings.Join(siblings, ", "))
	}
	switch {
	case len(moving) > 0:
		detail += movesByItselfDetail(moving, completes, blockedBy)
	case blockedBy != "":
		detail += "\n\nThe change " + blockedBy + "."
	}
	if len(moving) == 0 && !completes {
		detail += " It does not complete by itself."
	}
	if newResource {
		detail += readAtPlan
		if in.Record.Group(in.Self) != nil {
			detail += " To review them in a saved plan, import the shard count at the group's current count first, then change shard_count."
		}
	}
	tflog.Debug(ctx, "planned resharding", map[string]any{"stream_prefix": in.Record.Prefix, "from": from, "to": in.Target})
	resp.Diagnostics.AddAttributeWarning(path.Root("shard_count"), fmt.Sprintf("Resharding stream prefix %q", in.Record.Prefix), detail)
}
