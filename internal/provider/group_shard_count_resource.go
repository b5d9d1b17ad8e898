package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

var (
	_ resource.ResourceWithConfigure   = &groupShardCountResource{}
	_ resource.ResourceWithImportState = &groupShardCountResource{}
	_ resource.ResourceWithModifyPlan  = &groupShardCountResource{}
)

const (
	waitForCompletion = "COMPLETION"
	waitForAccepted   = "ACCEPTED"
)

const defaultScaleTimeout = 10 * time.Minute

// NewGroupShardCountResource is the redisstreamcoordinator_group_shard_count resource.
func NewGroupShardCountResource() resource.Resource { return &groupShardCountResource{} }

type groupShardCountResource struct{ pd *providerData }

type groupShardCountModel struct {
	ID                 types.String   `tfsdk:"id"`
	StreamPrefix       types.String   `tfsdk:"stream_prefix"`
	ConsumerGroup      types.String   `tfsdk:"consumer_group"`
	ShardCount         types.Int64    `tfsdk:"shard_count"`
	RequestedBy        types.String   `tfsdk:"requested_by"`
	Reason             types.String   `tfsdk:"reason"`
	WaitFor            types.String   `tfsdk:"wait_for"`
	RollbackOnRevert   types.Bool     `tfsdk:"rollback_on_revert"`
	MigrationIDs       types.Map      `tfsdk:"migration_ids"`
	MigrationState     types.String   `tfsdk:"migration_state"`
	PreviousShardCount types.Int64    `tfsdk:"previous_shard_count"`
	MetadataVersion    types.Int64    `tfsdk:"metadata_version"`
	AckMetadataVersion types.Int64    `tfsdk:"acknowledged_metadata_version"`
	Resharding         types.Object   `tfsdk:"resharding"`
	Timeouts           timeouts.Value `tfsdk:"timeouts"`
}

func (r *groupShardCountResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_group_shard_count"
}

func (r *groupShardCountResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The shard count of a stream prefix, addressed through one of its existing groups; a change rescales " +
			"every group of the prefix and, by default, waits until the resharding migration has completed.",
		Attributes: groupKeyAttributes("Stream prefix of the group. Changing it makes this resource manage another group.",
			"The consumer group whose shard count this is. The group must already exist (for example a `redisstreamcoordinator_group`).",
			"this resource's scale and rollback calls", map[string]schema.Attribute{
				"shard_count": schema.Int64Attribute{
					MarkdownDescription: fmt.Sprintf("Desired shard count: 0 or more, no upper bound (any count the coordinator holds "+
						"imports); a scale above %d warns at plan time. `0` drains every shard: producers refuse to publish until it is raised.",
						ConventionalShardCount),
					Required:   true,
					Validators: []validator.Int64{int64validator.Between(0, MaxShardCount)},
				},
				"wait_for": schema.StringAttribute{
					MarkdownDescription: "`COMPLETION` (default): wait until every affected group's migration is `DEPRECATED`. `ACCEPTED`: return " +
						"once the coordinator accepted the scale (routing has switched; consumers are still migrating).",
					Optional:   true,
					Computed:   true,
					Default:    stringdefault.StaticString(waitForCompletion),
					Validators: []validator.String{stringvalidator.OneOf(waitForCompletion, waitForAccepted)},
				},
				"rollback_on_revert": schema.BoolAttribute{
					MarkdownDescription: "Setting `shard_count` back to its starting count while the migration is `ACTIVE` rolls back every migration heading away from it, instead of failing; entries written to added shards are stranded. Defaults to `false`.",
					Optional:            true,
					Computed:            true,
					Default:             booldefault.StaticBool(false),
				},
				"migration_ids": schema.MapAttribute{
					MarkdownDescription: "The resharding id of the last change's migration, per affected consumer group (groups that already had the count are omitted).",
					Computed:            true,
					ElementType:         types.StringType,
					PlanModifiers:       []planmodifier.Map{mapplanmodifier.UseStateForUnknown()},
				},
				"migration_state": schema.StringAttribute{
					MarkdownDescription: "The last change's migration state: `DEPRECATED` (completed), `ROLLED_BACK`, `ACTIVE` (waiting for a consumer, or `wait_for = \"ACCEPTED\"`), or null (no change).",
					Computed:            true,
					PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
				},
				"previous_shard_count": schema.Int64Attribute{
					MarkdownDescription: "The shard count before the last change; null when none was needed.",
					Computed:            true,
					PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
				},
				"metadata_version": schema.Int64Attribute{
					MarkdownDescription: "The highest `metadataVersion` of the group seen; known after apply for a new resource. A lower one is a [regression](../guides/group-metadata-durability).",
					Computed:            true,
				},
				"acknowledged_metadata_version": schema.Int64Attribute{
					MarkdownDescription: "Unset by default. After a [metadata regression](../guides/group-metadata-durability), the version " +
						"the plan's error names, accepted as the new baseline; remove it after the apply.",
					Optional:   true,
					Validators: []validator.Int64{int64validator.AtLeast(0)},
				},
				"resharding": reshardingSchema(),
			}),
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{
				Create:            true,
				CreateDescription: "How long a new resource's scale and its wait may take, as a duration (`30s`, `2h45m`; units `s`, `m`, `h`). Defaults to `10m`.",
				Update:            true,
				UpdateDescription: "How long a scale and its wait may take, as a duration. Defaults to `10m`.",
			}),
		},
	}
}

func (r *groupShardCountResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.pd = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *groupShardCountResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan groupShardCountModel
	resp.Diagnostics.Append(getPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(setGroupIdentity(ctx, resp.Identity, plan.StreamPrefix, plan.ConsumerGroup)...)
	timeout, diags := plan.Timeouts.Create(ctx, defaultScaleTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.apply(ctx, timeout, plan, nil, nil, &resp.State, resp.Private, &resp.Diagnostics)
}

func (r *groupShardCountResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state groupShardCountModel
	resp.Diagnostics.Append(getPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(getState(ctx, req.State, &state)...)
	resp.Diagnostics.Append(setGroupIdentity(ctx, resp.Identity, state.StreamPrefix, state.ConsumerGroup)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rec, diags := readPrivateRecord(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	// A plan that keeps the count and leaves migration_ids to the apply (a
	// wait, a split prefix's repair) runs the executor, as a change does; a
	// pending wait sends nothing.
	p, g := state.StreamPrefix.ValueString(), state.ConsumerGroup.ValueString()
	recreated := r.pd.plans.of(p, g).create != nil
	if plan.ShardCount.Equal(state.ShardCount) && !rec.PendingWait && !plan.MigrationIDs.IsUnknown() {
		plan.ID, plan.MigrationIDs, plan.MigrationState, plan.PreviousShardCount = state.ID, state.MigrationIDs, state.MigrationState, state.PreviousShardCount
		if plan.MetadataVersion.IsUnknown() {
			plan.MetadataVersion = state.MetadataVersion
		}
		if plan.Resharding.IsUnknown() {
			plan.Resharding = state.Resharding
		}
		resp.Diagnostics.Append(updatePrivateRecord(ctx, resp.Private, func(pr *privateRecord) {
			if rec.MetadataRegression != nil {
				pr.EpochsSeen = acknowledgedMark(rec.MetadataRegression)
			}
			pr.MetadataRegression = nil
		})...)
		if recreated && !r.newLifecycle(ctx, p, g, &plan, resp.Private, &resp.Diagnostics) {
			return
		}
		resp.Diagnostics.Append(setState(ctx, &resp.State, &plan)...)
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultScaleTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	var resumed *groupShardCountModel
	if rec.PendingWait {
		resumed = &state
	}
	seen := rec.GroupSeen
	if r.pd.plans.of(p, g).deleted != nil {
		// This apply replaced the group: the refresh's record is the old group's.
		seen = nil
	}
	r.apply(ctx, timeout, plan, resumed, seen, &resp.State, resp.Private, &resp.Diagnostics)
	if recreated && resp.State.Raw.Equal(req.State.Raw) {
		// Stopped before recording: the state is still the old group's,
		// whose version the new group's refresh would take for a
		// regression. The new group, with none of its migrations, is state.
		if r.newLifecycle(ctx, p, g, &state, resp.Private, &resp.Diagnostics) {
			state.MigrationIDs, state.PreviousShardCount = types.MapNull(types.StringType), types.Int64Null()
			resp.Diagnostics.Append(setState(ctx, &resp.State, &state)...)
		}
	}
}

// newLifecycle makes the group this run re-created the metadata guard's
// baseline and m's: it starts again at metadataVersion 1, which is no
// regression, with none of the old group's migrations.
func (r *groupShardCountResource) newLifecycle(ctx context.Context, p, g string, m *groupShardCountModel, private privateSetter, diags *diag.Diagnostics) bool {
	group, err := r.pd.api.GetGroup(ctx, p, g)
	if err != nil {
		addAPIError(diags, fmt.Sprintf("Failed to read the re-created group %q under stream prefix %q", g, p), err,
			"Nothing was sent to the coordinator. Run terraform apply -refresh-only once the group exists, then plan again.")
		return false
	}
	m.MetadataVersion, m.MigrationState = types.Int64Value(group.MetadataVersion), types.StringNull()
	mark := markOf(group)
	diags.Append(updatePrivateRecord(ctx, private, func(r *privateRecord) {
		r.MetadataRegression, r.GroupSeen, r.EpochsSeen = nil, group, &mark
	})...)
	return true
}

func setPendingWait(ctx context.Context, private privateSetter, pending bool) diag.Diagnostics {
	return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.PendingWait = pending })
}

// apply records progress in state before it waits, so a timeout or crash
// leaves a resumable record. resumed is the prior state of an unfinished wait;
// seen is the group as the plan's refresh recorded it (nil for a create).
func (r *groupShardCountResource) apply(ctx context.Context, timeout time.Duration, plan groupShardCountModel, resumed *groupShardCountModel, seen *client.Group, state *tfsdk.State, private privateSetter, diags *diag.Diagnostics) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	target := int32(plan.ShardCount.ValueInt64())
	s := &scaler{
		providerData: r.pd, p: p, g: g, target: target, rollbackOnRevert: plan.RollbackOnRevert.ValueBool(), diags: diags,
		mutation: client.Mutation{RequestedBy: plan.RequestedBy.ValueString(), Reason: plan.Reason.ValueString()},
		planned:  plannedAffectedGroups(ctx, plan.Resharding),
	}
	s.checkBasis = func(ctx context.Context, group *client.Group) bool {
		return r.checkPlanBasis(ctx, s, seen, group)
	}
	s.waitOnly = resumed != nil && resumed.ShardCount.Equal(plan.ShardCount)
	if s.waitOnly && !resumed.MigrationIDs.IsNull() && !resumed.MigrationIDs.IsUnknown() {
		diags.Append(resumed.MigrationIDs.ElementsAs(ctx, &s.resumed, false)...)
	}
	// A resumed wait keeps the ids it planned; otherwise they are the migrations
	// tracked, as of each record.
	idsPlanned := !plan.MigrationIDs.IsUnknown()
	// Each record settles the preview from planned, so the one before the wait
	// does not fix completes_by_itself and blocked_by.
	planned := plan.Resharding
	// read: the record before a wait does not read the group; the wait's poll does.
	record := func(out *scaleOutcome, pending, read bool) {
		plan.ID = types.StringValue(groupID(p, g))
		if !idsPlanned {
			ids := map[string]string{}
			for g, m := range out.migrations {
				ids[g] = m.ReshardingID
			}
			plan.MigrationIDs, _ = types.MapValueFrom(ctx, types.StringType, ids)
		}
		plan.MigrationState = types.StringNull()
		if out.state != "" {
			plan.MigrationState = types.StringValue(string(out.state))
		}
		if plan.PreviousShardCount.IsUnknown() && out.previous != nil {
			plan.PreviousShardCount = types.Int64Value(int64(*out.previous))
		} else if plan.PreviousShardCount.IsUnknown() {
			plan.PreviousShardCount = types.Int64Null()
		}
		plan.Resharding = planned
		r.settleComputed(ctx, s, &plan, out, read)
		diags.Append(setState(ctx, state, &plan)...)
		diags.Append(updatePrivateRecord(ctx, private, func(r *privateRecord) {
			r.PendingWait, r.MetadataRegression, r.PrefixSeen = pending, nil, nil
			if s.self != nil {
				// A plan without a refresh must not see the migration waited for as under way.
				mark := markOf(s.self)
				r.GroupSeen, r.EpochsSeen = s.self, &mark
			}
		})...)
	}

	// Later reads of the prefix must not be served from a listing taken before start's sends.
	out := s.start(ctx)
	r.pd.noteMutation(p)
	if out != nil && out.changed() && diags.HasError() {
		// A change was made, then the apply stopped: record it with the wait pending,
		// so the next plan waits for it or repairs the prefix.
		record(out, plan.WaitFor.ValueString() != waitForAccepted, true)
		return
	}
	if diags.HasError() || out == nil {
		return
	}
	if !out.changed() && s.waitOnly {
		// The migration being resumed finished in the meantime.
		plan.MigrationIDs, plan.PreviousShardCount = resumed.MigrationIDs, resumed.PreviousShardCount
		idsPlanned, out.state = true, client.MigrationDeprecated
		record(out, false, true)
		return
	}
	if !out.unfinished() || plan.WaitFor.ValueString() == waitForAccepted {
		record(out, false, true)
		return
	}
	// The count has switched: record it before waiting, without reading the group (the poll will).
	record(out, true, false)
	finished := s.wait(ctx, out)
	record(out, !finished, true)
}

// settleComputed resolves the metadata version and any resharding values the
// plan left unknown. The group is the last one read after the last send, else
// one GET (a read, allowed past the operation's end), else what the answers imply.
func (r *groupShardCountResource) settleComputed(ctx context.Context, s *scaler, plan *groupShardCountModel, out *scaleOutcome, read bool) {
	group := s.self
	if !read && out.changed() && !s.selfSinceSend {
		group = nil
	} else if (out.changed() && !s.selfSinceSend) || group == nil {
		rctx := ctx
		if ctx.Err() != nil {
			var cancel context.CancelFunc
			rctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), s.timing.grace())
			defer cancel()
		}
		g, err := s.api.GetGroup(rctx, s.p, s.g)
		switch {
		case err == nil:
			group = g
			s.self, s.selfSinceSend = g, true
		case group == nil:
			addAPIError(s.diags, fmt.Sprintf("Failed to read group %q under stream prefix %q after changing it", s.g, s.p), err,
				"The change was made; run terraform apply -refresh-only to record the group's metadata version.")
			plan.MetadataVersion = types.Int64Null()
		case out.changed() && !s.selfSinceSend:
			// Recorded as read before the send, the next plan would take this
			// apply's own change for another actor's.
			group = s.impliedAfterSend(out)
			s.self = group
			addAPIWarning(s.diags, fmt.Sprintf("Could not read group %q under stream prefix %q after changing it", s.g, s.p), err, fmt.Sprintf(
				"State records the group as the coordinator's answers imply: %d shards%s. Its metadata_version (%d) is the one read before the "+
					"change, a lower bound. The next refresh records the group as it is; a plan made without a refresh resumes from this record.",
				group.ShardCount, activeMigrationNote(group), group.MetadataVersion))
		}
	}
	if group != nil && plan.MetadataVersion.IsUnknown() {
		plan.MetadataVersion = types.Int64Value(group.MetadataVersion)
	}
	if plan.Resharding.IsUnknown() || reshardingHasUnknowns(plan.Resharding) {
		plan.Resharding = r.reshardingAtApply(ctx, plan.Resharding, s, out)
	}
}

func (r *groupShardCountResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state groupShardCountModel
	resp.Diagnostics.Append(getState(ctx, req.State, &state)...)
	resp.Diagnostics.Append(setGroupIdentity(ctx, resp.Identity, state.StreamPrefix, state.ConsumerGroup)...)
	if resp.Diagnostics.HasError() {
		return
	}
	p, g := state.StreamPrefix.ValueString(), state.ConsumerGroup.ValueString()
	dropUnreadablePrivate(ctx, resp.Private, &resp.Diagnostics)
	if skipRefreshUnconfigured(r.pd, &resp.Diagnostics, importedNotRead(ctx, req.Private), "Shard count not refreshed",
		fmt.Sprintf("the shard count of group %s", groupID(p, g))) {
		return
	}
	group, err := r.pd.readGroup(ctx, p, g)
	if client.IsNotFound(err) {
		// A shard count has nothing to re-create: the group resource does that.
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Failed to read the shard count of group %q under stream prefix %q", g, p), err, "")
		return
	}
	resp.Diagnostics.Append(importConfirmed(ctx, resp.Private)...)
	// The import's own refresh is the one with no shard_count yet.
	resp.Diagnostics.Append(setImportRead(ctx, resp.Private, r.pd, state.ShardCount.IsNull())...)
	state.ID = types.StringValue(groupID(p, g))
	state.ShardCount = types.Int64Value(int64(group.ShardCount))
	seen := state.MetadataVersion
	state.MetadataVersion, _ = observeMetadataVersion(seen, group.MetadataVersion)
	prior, d := readMetadataRegression(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	highest := int64(0)
	if !seen.IsNull() && !seen.IsUnknown() {
		highest = seen.ValueInt64()
	}
	reg := nextRegression(prior, highest, group.MetadataVersion, state.AckMetadataVersion)
	if reg != nil && prior == nil {
		tflog.Warn(ctx, "group metadata version went back", map[string]any{"stream_prefix": p, "consumer_group": g, "seen": reg.Seen, "reported": reg.Reported})
	}
	if reg == nil {
		reg = observeGroupEpochs(ctx, req.Private, resp.Private, group, &resp.Diagnostics)
	}
	if lost := r.followMigration(ctx, &state, group, resp.Private, &resp.Diagnostics); lost != "" && reg == nil {
		reg = lostMigrationRegression(highest, group, lost, state.AckMetadataVersion)
	}
	resp.Diagnostics.Append(updatePrivateRecord(ctx, resp.Private, func(pr *privateRecord) { pr.MetadataRegression, pr.GroupSeen = reg, group })...)
	resp.Diagnostics.Append(r.recordSiblingsSeen(ctx, resp.Private, group)...)
	recordUnderWay(ctx, &state, group, &resp.Diagnostics)
	resp.Diagnostics.Append(setState(ctx, &resp.State, &state)...)
}

// followMigration updates migration_state, looking a finished migration up once: the group cannot
// tell completed from rolled back. It returns the id of a recorded migration the coordinator lost, or "".
func (r *groupShardCountResource) followMigration(ctx context.Context, state *groupShardCountModel, group *client.Group, private privateSetter, diags *diag.Diagnostics) string {
	if state.MigrationIDs.IsNull() || state.MigrationIDs.IsUnknown() || state.MigrationState.IsNull() {
		return ""
	}
	ids := map[string]string{}
	diags.Append(state.MigrationIDs.ElementsAs(ctx, &ids, false)...)
	id, ok := ids[group.ConsumerGroup]
	if !ok {
		return ""
	}
	if am := group.ActiveMigration; am != nil && am.ReshardingID == id {
		state.MigrationState = types.StringValue(string(am.State))
		return ""
	}
	switch client.MigrationState(state.MigrationState.ValueString()) {
	case client.MigrationDeprecated, client.MigrationRolledBack:
		return ""
	}
	m, err := r.pd.api.GetMigration(ctx, group.StreamPrefix, group.ConsumerGroup, id)
	if client.IsNotFound(err) {
		migrationForgotten(ctx, state, id, group, err, private, diags)
		return id
	}
	if err != nil {
		addAPIError(diags, fmt.Sprintf("Failed to read migration %s of group %q under stream prefix %q", id, group.ConsumerGroup, group.StreamPrefix), err,
			"The group no longer reports it as active; the provider looks it up to tell a completed migration from a rolled-back one.")
		return ""
	}
	state.MigrationState = types.StringValue(string(m.State))
	return ""
}

func (r *groupShardCountResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state groupShardCountModel
	resp.Diagnostics.Append(getState(ctx, req.State, &state)...)
	resp.Diagnostics.AddWarning("Shard count left as it is", fmt.Sprintf(
		"redisstreamcoordinator_group_shard_count for group %q under stream prefix %q was removed from Terraform state only: "+
			"a group always has a shard count, so it keeps %d shards.",
		state.ConsumerGroup.ValueString(), state.StreamPrefix.ValueString(), state.ShardCount.ValueInt64()))
}

func (r *groupShardCountResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importGroup(ctx, req, resp, map[string]any{
		"wait_for": waitForCompletion, "rollback_on_revert": false, "migration_ids": types.MapValueMust(types.StringType, nil),
	})
}

func plannedAffectedGroups(ctx context.Context, resharding types.Object) map[string]int64 {
	// A null or unknown object has no attributes.
	v, ok := resharding.Attributes()["affected_groups"].(types.Map)
	out := map[string]int64{}
	if !ok || v.IsNull() || v.IsUnknown() || v.ElementsAs(ctx, &out, false).HasError() {
		return nil
	}
	return out
}

// recordSiblingsSeen records the prefix as the refresh read it: Terraform's
// re-plan during apply has no refresh and must compute the same values
// however the prefix moved since.
func (r *groupShardCountResource) recordSiblingsSeen(ctx context.Context, private privateSetter, group *client.Group) diag.Diagnostics {
	all, err := r.pd.groupsForPlan(ctx)
	if err != nil {
		// The refresh stands, but must not let a split prefix plan "No changes".
		diags := updatePrivateRecord(ctx, private, func(r *privateRecord) { r.PrefixSeen = nil })
		addAPIWarning(&diags, fmt.Sprintf("Cannot check the other groups of stream prefix %q", group.StreamPrefix), err,
			"The refresh read the group but not the groups listing (GET /coord/v1/monitoring/groups, which the READ role allows), so this "+
				"plan cannot show whether every group of the prefix is at shard_count (a split prefix is drift). Fix the cause above and "+
				"plan again; a change of shard_count still lists the prefix and fails if it cannot.")
		return diags
	}
	seen := &prefixSeen{Groups: map[string]prefixSeenGroup{}}
	for _, gi := range prefix.FromListing(all, group.StreamPrefix).Groups {
		if gi.ConsumerGroup == group.ConsumerGroup {
			gi = *group
		}
		seen.Groups[gi.ConsumerGroup] = prefixSeenGroup{Count: gi.ShardCount, Empty: !hasLiveConsumer(gi), Migration: prefix.Unfinished(&gi)}
	}
	return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.PrefixSeen = seen })
}

func recordUnderWay(ctx context.Context, state *groupShardCountModel, group *client.Group, diags *diag.Diagnostics) {
	am := underWayMigration(group)
	if am == nil {
		return
	}
	ids, d := migrationIDs(ctx, state.MigrationIDs)
	diags.Append(d...)
	if ids[group.ConsumerGroup] != am.ReshardingID {
		v, d := types.MapValueFrom(ctx, types.StringType, map[string]string{group.ConsumerGroup: am.ReshardingID})
		diags.Append(d...)
		state.MigrationIDs = v
		state.PreviousShardCount = types.Int64Value(int64(am.FromShardCount))
	}
	state.MigrationState = types.StringValue(string(am.State))
}

func reshardingHasUnknowns(v types.Object) bool {
	return v.IsUnknown() || slices.ContainsFunc(slices.Collect(maps.Values(v.Attributes())), attr.Value.IsUnknown)
}

// reshardingAtApply fills in a preview the plan could not make, keeping what it knew.
func (r *groupShardCountResource) reshardingAtApply(ctx context.Context, planned types.Object, s *scaler, out *scaleOutcome) types.Object {
	if planned.IsUnknown() && !out.changed() {
		return reshardingNull()
	}
	m := reshardingModel{
		FromShardCount: types.Int64Null(), ToShardCount: types.Int64Value(int64(s.target)),
		AffectedGroups: types.MapValueMust(types.Int64Type, nil), MovedKeyPercent: types.Float64Null(),
		CompletesByItself: types.BoolValue(len(out.waitingForConsumer) == 0), BlockedBy: types.StringNull(),
		BasisMetadataVersion: types.Int64Null(), PlanCheck: types.StringValue("computed at apply"),
	}
	if out.previous != nil {
		m.FromShardCount = types.Int64Value(int64(*out.previous))
		m.MovedKeyPercent = types.Float64Value(movedKeyPercent(*out.previous, s.target))
	}
	affected := map[string]attr.Value{}
	for name, mig := range out.migrations {
		affected[name] = types.Int64Value(int64(mig.FromShardCount))
	}
	m.AffectedGroups = types.MapValueMust(types.Int64Type, affected)
	if len(out.waitingForConsumer) > 0 {
		m.BlockedBy = types.StringValue(fmt.Sprintf("scale-out of group(s) %s, which have no live consumer", strings.Join(sortedKeys(out.waitingForConsumer), ", ")))
	}
	if planned.IsUnknown() || planned.IsNull() {
		return m.object()
	}
	// Keep what the plan knew: state must agree with it.
	merged, computed := planned.Attributes(), m.object().Attributes()
	for name, v := range merged {
		if v.IsUnknown() {
			merged[name] = computed[name]
		}
	}
	return types.ObjectValueMust(reshardingAttrTypes, merged)
}
