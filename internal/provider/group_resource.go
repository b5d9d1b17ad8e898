package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

var (
	_ resource.ResourceWithConfigure   = &groupResource{}
	_ resource.ResourceWithImportState = &groupResource{}
	_ resource.ResourceWithModifyPlan  = &groupResource{}
)

const (
	deletionPolicyAbandon = "ABANDON"
	deletionPolicyDelete  = "DELETE"
)

const (
	defaultGroupCreateTimeout = 5 * time.Minute
	defaultGroupDeleteTimeout = 5 * time.Minute
)

// NewGroupResource is the redisstreamcoordinator_group resource.
func NewGroupResource() resource.Resource { return &groupResource{} }

type groupResource struct{ pd *providerData }

type groupResourceModel struct {
	ID                          types.String   `tfsdk:"id"`
	StreamPrefix                types.String   `tfsdk:"stream_prefix"`
	ConsumerGroup               types.String   `tfsdk:"consumer_group"`
	InitialShardCount           types.Int64    `tfsdk:"initial_shard_count"`
	ShardCount                  types.Int64    `tfsdk:"shard_count"`
	StreamKeyPattern            types.String   `tfsdk:"stream_key_pattern"`
	RequestedBy                 types.String   `tfsdk:"requested_by"`
	Reason                      types.String   `tfsdk:"reason"`
	DeletionPolicy              types.String   `tfsdk:"deletion_policy"`
	ForceDelete                 types.Bool     `tfsdk:"force_delete"`
	MetadataVersion             types.Int64    `tfsdk:"metadata_version"`
	AcknowledgedMetadataVersion types.Int64    `tfsdk:"acknowledged_metadata_version"`
	Recreation                  types.Object   `tfsdk:"recreation"`
	SiblingShardCounts          types.Map      `tfsdk:"sibling_shard_counts"`
	Timeouts                    timeouts.Value `tfsdk:"timeouts"`
}

func (r *groupResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_group"
}

func (r *groupResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A consumer group's metadata record on the coordinator: one `{stream_prefix, consumer_group}` pair, " +
			"created with its initial shard count. Its shard count is then managed by `redisstreamcoordinator_group_shard_count`. " +
			"Destroying it only removes it from Terraform state unless `deletion_policy = \"DELETE\"`.",
		Attributes: groupKeyAttributes("The logical stream; shard `i` is the Redis stream `<stream_prefix>:<i>`. Not blank, `.` or `..`, "+
			"and without braces, `/`, `;` or `%2F`; unconventional names warn. Changing it replaces the group.",
			"The consumer group name. Not blank, `.` or `..`, and without `/`, `;` or `%2F`; unconventional names warn. Changing it replaces the group.",
			"this group's create and delete calls", map[string]schema.Attribute{
				"initial_shard_count": schema.Int64Attribute{
					MarkdownDescription: fmt.Sprintf("Shard count the group is created with, used only at creation: at least 1 (above %d warns), equal to the siblings' unless the prefix is drained. Defaults to the siblings' count, else the coordinator's default ([known after apply](../guides/how-it-works#what-a-plan-reads)).", ConventionalShardCount),
					Optional:            true,
					Computed:            true,
					Validators:          []validator.Int64{int64validator.Between(1, MaxShardCount)},
					PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
				},
				"shard_count": schema.Int64Attribute{
					MarkdownDescription: "The shard count the group was created, imported or re-created with; refreshes do not follow scales (see `redisstreamcoordinator_group_shard_count`).",
					Computed:            true,
					PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
				},
				"stream_key_pattern": schema.StringAttribute{
					MarkdownDescription: "`<stream_prefix>:{shardIndex}`, the pattern producers substitute the shard index into.",
					Computed:            true,
					PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
				},
				"deletion_policy": schema.StringAttribute{
					MarkdownDescription: "On destroy: `ABANDON` (default) removes it from state only; `DELETE` deletes the group's metadata (the Redis streams stay), refused while consumers are live unless `force_delete`. Set `DELETE` and apply before destroying.",
					Optional:            true,
					Computed:            true,
					Default:             stringdefault.StaticString(deletionPolicyAbandon),
					Validators:          []validator.String{stringvalidator.OneOf(deletionPolicyAbandon, deletionPolicyDelete)},
				},
				"force_delete": schema.BoolAttribute{
					MarkdownDescription: "With `deletion_policy = \"DELETE\"`: delete even while consumers are live; they then fail their next heartbeat. Defaults to `false`.",
					Optional:            true,
					Computed:            true,
					Default:             booldefault.StaticBool(false),
				},
				"metadata_version": schema.Int64Attribute{
					MarkdownDescription: "The group's `metadataVersion` when this resource created, imported or re-created it, or as last acknowledged; refreshes do not change it. A lower version on the coordinator fails plans.",
					Computed:            true,
				},
				"acknowledged_metadata_version": schema.Int64Attribute{
					MarkdownDescription: "After a [metadata regression](../guides/group-metadata-durability), the version the plan's error names, accepted as the new `metadata_version`; remove it after the apply.",
					Optional:            true,
					Validators:          []validator.Int64{int64validator.AtLeast(0)},
				},
				"sibling_shard_counts": schema.MapAttribute{
					MarkdownDescription: "The prefix's other groups and their shard counts at the create (known after apply); null for an imported group.",
					Computed:            true,
					ElementType:         types.Int64Type,
				},
				"recreation": schema.SingleNestedAttribute{
					MarkdownDescription: "Set when this resource re-creates a group that vanished from the coordinator (a new lifecycle); null otherwise.",
					Computed:            true,
					Attributes: map[string]schema.Attribute{
						"previous_shard_count": schema.Int64Attribute{
							MarkdownDescription: "The shard count the vanished group had when this resource last read it.",
							Computed:            true,
						},
						"last_metadata_version_seen": schema.Int64Attribute{
							MarkdownDescription: "The highest `metadataVersion` seen for the vanished group.",
							Computed:            true,
						},
						"new_lifecycle": schema.StringAttribute{
							MarkdownDescription: "Consumers and producers must rejoin as new.",
							Computed:            true,
						},
					},
				},
			}),
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{
				Create:            true,
				CreateDescription: "How long the create may take, as a duration (`30s`, `2h45m`; units `s`, `m`, `h`). Defaults to `5m`.",
				Delete:            true,
				DeleteDescription: "How long the delete may take, as a duration. Defaults to `5m`; set it, and apply, before the destroy.",
			}),
		},
	}
}

// groupKeyAttributes adds the attributes of a resource addressed by one group
// (its id and name, and the requestedBy and reason of its calls) to attrs.
// redisstreamcoordinator_group_shard_count repeats them and can take them from here.
func groupKeyAttributes(prefixDoc, groupDoc, calls string, attrs map[string]schema.Attribute) map[string]schema.Attribute {
	attrs["id"] = schema.StringAttribute{MarkdownDescription: "`{stream_prefix}/{consumer_group}`; also the import id.", Computed: true,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}}
	attrs["stream_prefix"] = schema.StringAttribute{MarkdownDescription: prefixDoc, Required: true,
		Validators: []validator.String{streamPrefixValidator}, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}}
	attrs["consumer_group"] = schema.StringAttribute{MarkdownDescription: groupDoc, Required: true,
		Validators: []validator.String{consumerGroupValidator}, PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}}
	attrs["requested_by"] = schema.StringAttribute{Optional: true, Validators: []validator.String{notBlankValidator},
		MarkdownDescription: "`requestedBy` for " + calls + ". Defaults to the provider's `requested_by`."}
	attrs["reason"] = schema.StringAttribute{Optional: true, Validators: []validator.String{notBlankValidator},
		MarkdownDescription: "`reason` for " + calls + ". Defaults to the provider's `default_reason`."}
	return attrs
}

func (r *groupResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.pd = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (m *groupResourceModel) fill(g *client.Group) {
	m.ID = types.StringValue(groupID(g.StreamPrefix, g.ConsumerGroup))
	m.ShardCount = types.Int64Value(int64(g.ShardCount))
	switch {
	case m.InitialShardCount.IsUnknown():
		m.InitialShardCount = types.Int64Value(int64(g.ShardCount))
	case m.InitialShardCount.IsNull() && g.ShardCount > 0:
		// A drained group (0 shards) keeps null: 0 cannot create a group.
		m.InitialShardCount = types.Int64Value(int64(g.ShardCount))
	}
	m.StreamKeyPattern = types.StringValue(routing.StreamKeyPattern(g.StreamPrefix))
	m.MetadataVersion = types.Int64Value(g.MetadataVersion)
}

func (r *groupResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state groupResourceModel
	resp.Diagnostics.Append(getState(ctx, req.State, &state)...)
	resp.Diagnostics.Append(setGroupIdentity(ctx, resp.Identity, state.StreamPrefix, state.ConsumerGroup)...)
	if resp.Diagnostics.HasError() {
		return
	}
	dropUnreadablePrivate(ctx, resp.Private, &resp.Diagnostics)
	p, g := state.StreamPrefix.ValueString(), state.ConsumerGroup.ValueString()
	importing := importedNotRead(ctx, req.Private)
	if skipRefreshUnconfigured(r.pd, &resp.Diagnostics, importing, "Group not refreshed", fmt.Sprintf("group %s", groupID(p, g))) {
		return
	}
	group, err := r.pd.readGroup(ctx, p, g)
	if client.IsNotFound(err) && importing {
		resp.State.RemoveResource(ctx)
		return
	}
	rec, diags := readPrivateRecord(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	if client.IsNotFound(err) {
		// Kept in state as vanished so the plan shows a re-creation, not a bare create.
		tflog.Warn(ctx, "group no longer exists on the coordinator; planning its re-creation", map[string]any{"stream_prefix": p, "consumer_group": g})
		vanished := rec.GroupVanished
		if vanished == nil {
			last := deletedAsPlanned(ctx, req.Private, p, g, state)
			vanished = &groupVanished{ShardCount: int64(last.ShardCount), MetadataVersion: last.MetadataVersion}
		}
		if vanished.ConsumerGroup == "" {
			vanished.StreamPrefix, vanished.ConsumerGroup = p, g
		}
		resp.Diagnostics.Append(updatePrivateRecord(ctx, resp.Private, func(r *privateRecord) { r.GroupVanished = vanished })...)
		return
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Failed to read group %q under stream prefix %q", g, p), err, "")
		return
	}
	resp.Diagnostics.Append(importConfirmed(ctx, resp.Private)...)
	// Not raised by a refresh: scales are not changes of this resource, and
	// Terraform would report each as "changed outside of Terraform".
	var seen groupHighest
	if rec.GroupHighest != nil {
		seen = *rec.GroupHighest
	}
	highest := seen.MetadataVersion
	if v := state.MetadataVersion; !v.IsNull() && !v.IsUnknown() && v.ValueInt64() > highest {
		highest = v.ValueInt64()
	}
	prior := rec.MetadataRegression
	reg := nextRegression(prior, highest, group.MetadataVersion, state.AcknowledgedMetadataVersion)
	if reg == nil || group.MetadataVersion > seen.MetadataVersion {
		seen = groupHighest{MetadataVersion: group.MetadataVersion, ShardCount: int64(group.ShardCount)}
	}
	switch {
	case reg != nil && prior == nil:
		tflog.Warn(ctx, "group metadata version regressed", map[string]any{
			"stream_prefix": p, "consumer_group": g, "seen": reg.Seen, "reported": reg.Reported,
		})
	case reg == nil:
		reg = observeGroupEpochs(ctx, req.Private, resp.Private, group, &resp.Diagnostics)
	}
	resp.Diagnostics.Append(updatePrivateRecord(ctx, resp.Private, func(r *privateRecord) {
		r.GroupVanished, r.MetadataRegression, r.GroupHighest = nil, reg, &seen
	})...)
	if state.ShardCount.IsNull() || state.ShardCount.IsUnknown() || state.MetadataVersion.IsNull() || state.MetadataVersion.IsUnknown() {
		state.fill(group)
	}
	state.ID = types.StringValue(groupID(p, g))
	state.StreamKeyPattern = types.StringValue(routing.StreamKeyPattern(p))
	if state.Recreation.IsUnknown() || state.Recreation.IsNull() {
		state.Recreation = recreationNull()
	}
	if state.SiblingShardCounts.IsUnknown() {
		state.SiblingShardCounts = types.MapNull(types.Int64Type)
	}
	resp.Diagnostics.Append(setState(ctx, &resp.State, &state)...)
}

// Update changes only Terraform-side settings: the API cannot change a group.
func (r *groupResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state groupResourceModel
	resp.Diagnostics.Append(getPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(getState(ctx, req.State, &state)...)
	resp.Diagnostics.Append(setGroupIdentity(ctx, resp.Identity, state.StreamPrefix, state.ConsumerGroup)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID, plan.ShardCount, plan.StreamKeyPattern = state.ID, state.ShardCount, state.StreamKeyPattern
	plan.Recreation, plan.SiblingShardCounts = state.Recreation, state.SiblingShardCounts
	if plan.InitialShardCount.IsUnknown() {
		plan.InitialShardCount = state.InitialShardCount
	}
	reg, diags := readMetadataRegression(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	if plan.MetadataVersion.IsUnknown() {
		plan.MetadataVersion = state.MetadataVersion
	}
	if reg.acknowledges(plan.AcknowledgedMetadataVersion) {
		ack := plan.AcknowledgedMetadataVersion.ValueInt64()
		tflog.Info(ctx, "metadata regression acknowledged; new baseline", map[string]any{
			"stream_prefix": plan.StreamPrefix.ValueString(), "consumer_group": plan.ConsumerGroup.ValueString(),
			"from": reg.Seen, "to": ack,
		})
		plan.MetadataVersion = types.Int64Value(ack)
		resp.Diagnostics.Append(updatePrivateRecord(ctx, resp.Private, func(r *privateRecord) {
			r.MetadataRegression, r.EpochsSeen = nil, acknowledgedMark(reg)
			r.GroupHighest = &groupHighest{MetadataVersion: ack, ShardCount: plan.ShardCount.ValueInt64()}
		})...)
	}
	resp.Diagnostics.Append(setState(ctx, &resp.State, &plan)...)
}

func (r *groupResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state groupResourceModel
	resp.Diagnostics.Append(getState(ctx, req.State, &state)...)
	timeout, diags := state.Timeouts.Delete(ctx, defaultGroupDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	p, g := state.StreamPrefix.ValueString(), state.ConsumerGroup.ValueString()
	rec, diags := readPrivateRecord(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	if vanished := rec.GroupVanished; vanished != nil {
		r.pd.plans.note(p, g, func(rg *runGroup) { rg.vanished = vanished })
		return
	}
	if resp.Diagnostics.HasError() || !r.refuseStaleReplacement(ctx, rec, p, g, &resp.Diagnostics) {
		return
	}
	if state.DeletionPolicy.ValueString() != deletionPolicyDelete {
		resp.Diagnostics.AddWarning("Group left on the coordinator", fmt.Sprintf(
			"deletion_policy is %q, so group %q under stream prefix %q was only removed from Terraform state; its metadata stays on "+
				"the coordinator. To delete it through Terraform, set deletion_policy = \"DELETE\", apply, then destroy; once it is "+
				"out of state, the redisstreamcoordinator_delete_group action deletes it (Terraform 1.14 or later).",
			deletionPolicyAbandon, g, p))
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	api := r.pd.api
	force := state.ForceDelete.ValueBool()
	m := client.Mutation{RequestID: api.NewRequestID("delete-group"), RequestedBy: state.RequestedBy.ValueString(), Reason: state.Reason.ValueString()}
	// Registered before the request: the coordinator applies the delete before
	// answering, and other resources of the apply plan in between.
	deleted := r.pd.deletedWithListed(ctx, deletedAsPlanned(ctx, req.Private, p, g, state))
	r.pd.plans.note(p, g, func(rg *runGroup) { rg.deleted = &deleted })
	err := r.deleteGroup(ctx, p, g, force, m, &resp.Diagnostics)
	r.pd.noteDelete(p)
	switch {
	case err == nil, client.IsNotFound(err):
		return
	case client.IsConflict(err, client.CodeGroupHasActiveMembers):
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Group %q under stream prefix %q still has live consumers", g, p), err,
			liveMembersHint(ctx, api, p, g)+"Stop those consumers (they must leave or let their lease expire), or set force_delete = true "+
				"and apply before destroying, accepting that they fail their next heartbeat.")
	default:
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Failed to delete group %q under stream prefix %q", g, p), err, "")
	}
}

func liveMembersHint(ctx context.Context, api *client.Client, p, g string) string {
	members, err := liveMembers(ctx, api, p, g)
	if err != nil || len(members) == 0 {
		return ""
	}
	var live []string
	for _, mem := range members {
		live = append(live, fmt.Sprintf("%s (%s, %s)", mem.MemberID, mem.MemberName, mem.State))
	}
	return "Live members: " + strings.Join(live, ", ") + ".\n"
}

func liveMembers(ctx context.Context, api *client.Client, p, g string) ([]client.Member, error) {
	members, err := api.Members(ctx, p, g)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var live []client.Member
	for _, m := range members {
		if m.Live(now) {
			live = append(live, m)
		}
	}
	return live, nil
}

func (r *groupResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importGroup(ctx, req, resp, map[string]any{"deletion_policy": deletionPolicyAbandon, "force_delete": false})
}
