package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

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
	prior, diags := readPrivateRecord(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	importing := r.pd != nil && prior.ImportRead != "" && prior.ImportRead == r.pd.configuration
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
	reg := prior.MetadataRegression
	if state != nil {
		checkMetadataRegression(&resp.Diagnostics, "redisstreamcoordinator_group_shard_count", state.StreamPrefix.ValueString(),
			state.ConsumerGroup.ValueString(), reg, plan.AckMetadataVersion)
	}
	if resp.Diagnostics.HasError() {
		return
	}

	pending, seen := state != nil && prior.PendingWait, (*client.Group)(nil)
	// The refresh's records are the basis only for the group they were read for.
	same := r.pd != nil && known && state != nil && plan.StreamPrefix.Equal(state.StreamPrefix) && plan.ConsumerGroup.Equal(state.ConsumerGroup)
	if same {
		seen = prior.GroupSeen
	}
	if state != nil && plan.ShardCount.Equal(state.ShardCount) {
		plan.ID, plan.MigrationIDs, plan.MigrationState, plan.PreviousShardCount = state.ID, state.MigrationIDs, state.MigrationState, state.PreviousShardCount
		plan.MetadataVersion, plan.Resharding = state.MetadataVersion, state.Resharding
		if reg != nil {
			// Acknowledged: the baseline until the next refresh raises it to the coordinator's.
			plan.MetadataVersion = plan.AckMetadataVersion
		}
		if same && r.planRecreated(ctx, &plan, &seen, prior, resp) {
			pending = false
		}
		switch {
		case importing && importPlansNothing(ctx, resp.Plan, &plan, req.State):
			warnUnderWayAtImport(plan, seen, resp)
		case seen != nil && r.planKeep(ctx, &plan, seen, pending, prior, resp):
			pending = false // planKeep planned the update (a resumed wait among them): no second warning
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
	} else {
		plan.ID = types.StringUnknown()
		if known {
			plan.ID = types.StringValue(groupID(plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()))
		}
		planUpdate(&plan, types.ObjectUnknown(reshardingAttrTypes))
		plan.PreviousShardCount = types.Int64Unknown()
		switch {
		case r.pd != nil && len(r.pd.configUnknown) > 0:
			// Terraform re-plans during apply with the provider configured: a value
			// known now would have to match that plan's.
			resp.Diagnostics.AddWarning("Shard count change not checked at plan time", "The resharding preview of "+
				groupID(plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString())+" is known only after apply. "+r.pd.unknownConfigDetail())
		case r.pd != nil && known:
			var refreshed *prefix.Record
			if rec, ok := prior.prefix(plan.StreamPrefix.ValueString()); same && ok {
				refreshed = &rec
			}
			r.preview(ctx, &plan, seen, refreshed, resp)
		}
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

// checkOnePerPrefix fails the plan when two resources manage one stream prefix's shard count.
func (r *groupShardCountResource) checkOnePerPrefix(plan groupShardCountModel, resp *resource.ModifyPlanResponse) {
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	groups := r.pd.plans.registerShardCount(p, g) // distinct, sorted
	if len(groups) < 2 {
		return
	}
	resp.Diagnostics.AddAttributeError(path.Root("stream_prefix"), fmt.Sprintf("Stream prefix %q has more than one shard count resource", p),
		fmt.Sprintf("This configuration declares redisstreamcoordinator_group_shard_count resources for groups %s, all under stream prefix %q. "+
			"The coordinator scales a stream prefix as a whole (every group of the prefix gets the new count), so two resources "+
			"would race: one scales, the other is refused with 409 ACTIVE_MIGRATION_EXISTS or scales the prefix back.\n\n"+
			"Keep one redisstreamcoordinator_group_shard_count per stream prefix (on any one of its groups) and remove the others "+
			"(removing one only forgets it; the groups keep their counts).", quoted(groups), p))
}

// preview fills the planned resharding values or fails the plan. The re-plan
// during apply must reproduce them, so they come from the refresh's records
// (seen, refreshed), and a newer read that differs fails the plan as stale.
func (r *groupShardCountResource) preview(ctx context.Context, plan *groupShardCountModel, seen *client.Group, refreshed *prefix.Record, resp *resource.ModifyPlanResponse) {
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
	rec := asPlanned(&r.pd.plans, prefix.FromListing(all, p), g, refreshed)
	run := r.pd.plans.of(p, g)
	createdHere := run.create != nil
	if seen != nil && !createdHere && run.deleted == nil {
		// A replaced group is planned as created: the re-plan during apply no longer finds the old one.
		if !r.pd.checkGroupBasis(ctx, &resp.Diagnostics, p, g, target, seen, rec.Group(g)) {
			return
		}
		rec = rec.With(*seen)
	}
	// Also when the group is replaced: deleted siblings are put back as the refresh read them.
	if refreshed != nil && !r.pd.checkPrefixBasis(&resp.Diagnostics, p, g, target, *refreshed, rec) {
		return
	}
	check, from, basis := planCheckRead, int32(-1), types.Int64Null()
	self := rec.Group(g)
	switch {
	case createdHere:
		// The re-plan during apply, after the group exists, must describe it the
		// same way: as its create makes it, EMPTY (no consumer yet) at its initial count.
		rec, self, check = rec.Without(g), nil, planCheckGroupCreated
		if n := run.create.InitialShardCount; n != nil {
			from = int32(*n)
			rec = rec.With(client.Group{StreamPrefix: p, ConsumerGroup: g, ShardCount: from, State: client.GroupEmpty})
		}
	case self == nil:
		resp.Diagnostics.AddAttributeError(path.Root("consumer_group"), fmt.Sprintf("Group %q under stream prefix %q does not exist", g, p), fmt.Sprintf(
			"The coordinator has no group %q under stream prefix %q (groups of the prefix: %s), and this configuration does not create it. "+
				"A shard count can only be set on an existing group. Check the names (they are case-sensitive), or create the group "+
				"with redisstreamcoordinator_group and reference that resource's attributes here "+
				"(stream_prefix = redisstreamcoordinator_group.<name>.stream_prefix, consumer_group = redisstreamcoordinator_group.<name>.consumer_group), "+
				"so Terraform plans and creates the group first.", g, p, quoted(slices.Sorted(maps.Keys(rec.Counts())))))
		return
	default:
		from, basis = self.ShardCount, types.Int64Value(self.MetadataVersion)
		if am := self.ActiveMigration; !am.Finished() && am.ToShardCount == target {
			// The count switched when the migration was accepted.
			from = am.FromShardCount
		}
	}
	in := prefix.Input{Record: rec, Self: g, Target: target, RollbackOnRevert: plan.RollbackOnRevert.ValueBool()}
	d := prefix.Decide(in)
	if createdHere && from < 0 {
		// Created at a count known only at apply: a scale-out of it may wait for a consumer.
		d.NoConsumer = append(d.NoConsumer, g)
	}
	if from == target && d.AdoptsOnly() {
		// Nothing will be sent (siblings at another count would be, and take the
		// preview below; a migration of this group heading elsewhere is waited for
		// or rolled back). A sibling's migration to the count is taken over by the
		// apply, which alone learns its ids and state.
		if seen == nil {
			// A new resource (below): the apply may find a change to make.
			return
		}
		plan.Resharding = reshardingNull()
		plan.PreviousShardCount = types.Int64Null()
		plan.MigrationIDs = types.MapValueMust(types.StringType, nil)
		plan.MigrationState = types.StringNull()
		if len(d.Steps) > 0 {
			plan.MigrationIDs = types.MapUnknown(types.StringType)
			plan.MigrationState = types.StringUnknown()
		}
		if !createdHere {
			plan.MetadataVersion = basis
		}
		return
	}
	largeShardCountWarning(&resp.Diagnostics, "shard_count", int64(target), fmt.Sprintf("Stream prefix %q is scaled to", p))
	if d.Refusal != nil {
		previewFatal(&resp.Diagnostics, p, target, plan.RollbackOnRevert.ValueBool(), d.Refusal, "")
		return
	}
	pv := previewOf(in, d, from, basis, check)
	if createdHere && slices.Contains(d.NoConsumer, g) {
		pv.blockedBy += fmt.Sprintf(" (group %q is created in this apply: create it first, start its consumers, then scale)", g)
	}
	if seen == nil {
		// A new resource is re-planned during apply from a fresh read, with no prior
		// state or private data, so the preview stays unknown; the warning shows the
		// prefix as read now.
		pv.moving = nil
	} else {
		if from >= 0 {
			plan.PreviousShardCount = types.Int64Value(int64(from))
		}
		plan.Resharding = pv.m.object()
	}
	summary := fmt.Sprintf("Resharding stream prefix %q", p)
	if from < 0 {
		if len(pv.moving) > 0 {
			resp.Diagnostics.AddAttributeWarning(path.Root("shard_count"), summary, fmt.Sprintf("Stream prefix %q is scaled to %d shards.", p, target)+pv.tail())
		}
		return
	}
	detail := fmt.Sprintf("Group %q under stream prefix %q goes from %d to %d shards. The partition→shard mapping changes: %.2f%% of partition keys move to another shard. "+
		"Producers that cannot tolerate duplicates must be paused (and their retries drained) before applying, then resumed once the "+
		"migration completes and their routing is refreshed. Terraform cannot verify that they were paused.",
		g, p, from, target, movedKeyPercent(from, target))
	if target == 0 {
		detail += " A count of 0 retires every shard: producers refuse to publish until the count is raised again."
	}
	var siblings []string
	for _, gi := range rec.Without(g).Groups {
		siblings = append(siblings, fmt.Sprintf("%q (%d shards)", gi.ConsumerGroup, gi.ShardCount))
	}
	if len(siblings) > 0 {
		detail += fmt.Sprintf("\n\nThe stream-level scale also rescales the other groups of the prefix: %s.", strings.Join(siblings, ", "))
	}
	detail += pv.tail()
	if seen == nil {
		detail += "\n\nThis is the prefix as read at plan time. The resharding values are known after apply: Terraform plans a new " +
			"resource again when it applies, and the apply scales from the counts it finds then."
		if !createdHere {
			detail += " To review them in a saved plan, import the shard count at the group's current count first, then change shard_count."
		}
	}
	tflog.Debug(ctx, "planned resharding", map[string]any{"stream_prefix": p, "from": from, "to": target})
	resp.Diagnostics.AddAttributeWarning(path.Root("shard_count"), summary, detail)
	if am := prefix.Unfinished(self); seen == nil && am != nil && am.ToShardCount == target {
		resp.Diagnostics.AddAttributeWarning(path.Root("shard_count"), fmt.Sprintf("Resharding of stream prefix %q already under way", p),
			fmt.Sprintf("Group %q of stream prefix %q has %s under way, already heading to the configured count: the apply takes it "+
				"over and sends no scale for it.", g, p, prefix.Describe(am)))
	}
}

// withOutcomeUnknown leaves completes_by_itself and blocked_by to the apply.
func withOutcomeUnknown(resharding types.Object) types.Object {
	if resharding.IsNull() || resharding.IsUnknown() {
		return resharding
	}
	attrs := resharding.Attributes()
	attrs["completes_by_itself"], attrs["blocked_by"] = types.BoolUnknown(), types.StringUnknown()
	return types.ObjectValueMust(reshardingAttrTypes, attrs)
}

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

// Terraform re-plans during apply and refuses planned values that differ, so
// the preview is built only from what that re-plan reproduces: groups this
// run deletes or creates are put back or left out, and an assessment that
// depends on what moves by itself (liveness, migration state) stays unknown.

// asPlanned is the prefix as this run's plan sees it, so the re-plan during
// apply describes it the same way: the groups other than g this run creates
// are left out (but a replacement not deleted yet: it exists when the scale
// is sent), and the groups it deleted are put back as its refresh saw them
// (a move of a group after the plan that then deletes it changes nothing the
// apply does).
func asPlanned(reg *planRegistry, rec prefix.Record, g string, refreshed *prefix.Record) prefix.Record {
	var planned []string
	for _, gi := range rec.Groups {
		run := reg.of(rec.Prefix, gi.ConsumerGroup)
		if gi.ConsumerGroup != g && run.create != nil && (!run.deletesOnReplace || run.deleted != nil) {
			planned = append(planned, gi.ConsumerGroup)
		}
	}
	rec = rec.Without(planned...)
	all := rec.Groups
	for _, grp := range reg.withDeleted(prefix.Record{Prefix: rec.Prefix}).Without(g).Groups {
		if rec.Group(grp.ConsumerGroup) != nil {
			continue
		}
		if refreshed != nil {
			if was := refreshed.Group(grp.ConsumerGroup); was != nil {
				grp.ShardCount, grp.ActiveMigration, grp.State = was.ShardCount, was.ActiveMigration, was.State
			}
		}
		all = append(all, grp)
	}
	return prefix.FromListing(all, rec.Prefix)
}
