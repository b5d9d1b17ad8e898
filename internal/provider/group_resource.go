package provider

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
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

// Deletion policies of redisstreamcoordinator_group.
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
	ID                types.String   `tfsdk:"id"`
	StreamPrefix      types.String   `tfsdk:"stream_prefix"`
	ConsumerGroup     types.String   `tfsdk:"consumer_group"`
	InitialShardCount types.Int64    `tfsdk:"initial_shard_count"`
	ShardCount        types.Int64    `tfsdk:"shard_count"`
	StreamKeyPattern  types.String   `tfsdk:"stream_key_pattern"`
	RequestedBy       types.String   `tfsdk:"requested_by"`
	Reason            types.String   `tfsdk:"reason"`
	DeletionPolicy    types.String   `tfsdk:"deletion_policy"`
	ForceDelete       types.Bool     `tfsdk:"force_delete"`
	Timeouts          timeouts.Value `tfsdk:"timeouts"`
}

func (r *groupResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_group"
}

func (r *groupResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A consumer group's metadata record on the coordinator: one `{stream_prefix, consumer_group}` pair, " +
			"created with its initial shard count. Change the shard count of an existing group with " +
			"`redisstreamcoordinator_group_shard_count`. Runtime state (epochs, assignments, migrations) is read with the " +
			"`redisstreamcoordinator_group` data source.\n\n" +
			"By default destroying this resource only removes it from Terraform state (`deletion_policy = \"ABANDON\"`), " +
			"because the coordinator's governance keeps deletes an explicit, audited decision.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "`{stream_prefix}/{consumer_group}`; also the import id.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"stream_prefix": schema.StringAttribute{
				MarkdownDescription: "The logical stream; shard `i` is the Redis stream `<stream_prefix>:<i>`. Letters, digits, " +
					"`.`, `_`, `:` and `-` (no braces, which would form a Redis Cluster hash tag). Changing it replaces the group.",
				Required:      true,
				Validators:    []validator.String{streamPrefixValidator},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"consumer_group": schema.StringAttribute{
				MarkdownDescription: "The consumer group name. Same character rules as `stream_prefix`. Changing it replaces the group.",
				Required:            true,
				Validators:          []validator.String{consumerGroupValidator},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"initial_shard_count": schema.Int64Attribute{
				MarkdownDescription: fmt.Sprintf("Shard count the group is created with (1 to %d). When omitted, the group takes the current "+
					"shard count of the other groups under the same stream prefix (producers route with one count per prefix), or the "+
					"coordinator's default (12) for a new prefix. Creating a group whose count differs from its siblings' fails before "+
					"anything is sent. Changing it later changes nothing on the coordinator: use `redisstreamcoordinator_group_shard_count`.",
					MaxShardCount),
				Optional:      true,
				Computed:      true,
				Validators:    []validator.Int64{int64validator.Between(1, MaxShardCount)},
				PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"shard_count": schema.Int64Attribute{
				MarkdownDescription: "The group's current shard count as the coordinator reports it (refreshed on every plan).",
				Computed:            true,
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
			},
			"stream_key_pattern": schema.StringAttribute{
				MarkdownDescription: "`<stream_prefix>:{shardIndex}`, the pattern producers substitute the shard index into.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"requested_by": schema.StringAttribute{
				MarkdownDescription: "`requestedBy` for this group's create and delete calls, recorded in the coordinator's audit log. Defaults to the provider's `requested_by`.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"reason": schema.StringAttribute{
				MarkdownDescription: "`reason` for this group's create and delete calls. Defaults to the provider's `default_reason`.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
			},
			"deletion_policy": schema.StringAttribute{
				MarkdownDescription: "What destroying the resource does. `ABANDON` (default) removes it from Terraform state only and leaves " +
					"the coordinator's metadata in place, with a warning. `DELETE` deletes the group's metadata (an audited " +
					"`DELETE` call; Redis streams and consumer groups stay). A delete is refused while consumers are live, unless `force_delete` is set. " +
					"Set `DELETE` and apply before destroying.",
				Optional:   true,
				Computed:   true,
				Default:    stringdefault.StaticString(deletionPolicyAbandon),
				Validators: []validator.String{stringvalidator.OneOf(deletionPolicyAbandon, deletionPolicyDelete)},
			},
			"force_delete": schema.BoolAttribute{
				MarkdownDescription: "With `deletion_policy = \"DELETE\"`: delete even while consumers are ACTIVE or STARTING (`force=true`). " +
					"Those consumers then fail their next heartbeat. Defaults to `false`.",
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Delete: true}),
		},
	}
}

func (r *groupResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.pd = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *groupResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan groupResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultGroupCreateTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	api := r.pd.api
	// Siblings created in the same apply must see each other, so sibling
	// resolution and the create are one step per prefix.
	defer r.pd.prefixLocks.Lock(p)()

	count, diags := resolveInitialShardCount(ctx, api.Groups, p, g, plan.InitialShardCount, true)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}

	m := client.Mutation{RequestID: api.NewRequestID("create-group"), RequestedBy: plan.RequestedBy.ValueString(), Reason: plan.Reason.ValueString()}
	group, err := api.CreateGroup(ctx, p, g, count, m)
	if client.IsAmbiguous(err) {
		group, err = r.settleAmbiguousCreate(ctx, p, g, count, m, &resp.Diagnostics)
	}
	if err != nil {
		addCreateGroupError(&resp.Diagnostics, p, g, err)
		return
	}
	plan.fill(group)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// settleAmbiguousCreate decides what happened to a create whose response was
// lost: the group exists as we would have created it (adopt, with a warning),
// does not exist (send the same create again, same request id), or exists
// otherwise (someone else created it: an error with the import hint).
func (r *groupResource) settleAmbiguousCreate(ctx context.Context, p, g string, count *int32, m client.Mutation, diags *diag.Diagnostics) (*client.Group, error) {
	api := r.pd.api
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		tflog.Warn(ctx, "create group response lost; checking whether the coordinator applied it", map[string]any{
			"stream_prefix": p, "consumer_group": g, "request_id": m.RequestID, "attempt": attempt + 1,
		})
		group, err := api.GetGroup(ctx, p, g)
		switch {
		case err == nil:
			if group.MetadataVersion == 1 && (count == nil || group.ShardCount == *count) {
				diags.AddWarning("Adopted a group whose create response was lost",
					fmt.Sprintf("The connection to the coordinator was lost after sending the create of group %q under stream prefix %q "+
						"(request id %s). The group now exists with %d shards and metadataVersion 1, as this create would have made it, so "+
						"it was adopted into state. Adoption is likely but unproven: if another actor created the same group at the same "+
						"moment, check the coordinator's audit log for request id %s.", g, p, m.RequestID, group.ShardCount, m.RequestID))
				return group, nil
			}
			return nil, fmt.Errorf("%w: after the create's response was lost (request id %s), the group exists with %d shards and "+
				"metadataVersion %d, which this create would not have made", errCreatedByOther, m.RequestID, group.ShardCount, group.MetadataVersion)
		case client.IsNotFound(err):
			group, err = api.CreateGroup(ctx, p, g, count, m)
			if err == nil || !client.IsAmbiguous(err) {
				return group, err
			}
			lastErr = err
		default:
			return nil, err
		}
	}
	return nil, lastErr
}

// errCreatedByOther: after a lost create response, the group turned out to
// exist in a shape this create would not have made.
var errCreatedByOther = errors.New("the group was created by someone else")

func importHint(p, g string) string {
	return fmt.Sprintf(
		"Group %q under stream prefix %q already exists on the coordinator. The provider never adopts an existing group silently. "+
			"To manage it with Terraform, import it:\n\n"+
			"  import {\n    to = redisstreamcoordinator_group.<name>\n    id = %q\n  }\n\n"+
			"or run: terraform import redisstreamcoordinator_group.<name> %s\n\n"+
			"With deletion_policy = \"ABANDON\" (the default), a destroy or -replace leaves the group on the coordinator, so the "+
			"next create meets it here: import it back, or set deletion_policy = \"DELETE\" before replacing.", g, p, groupID(p, g), groupID(p, g))
}

func addCreateGroupError(diags *diag.Diagnostics, p, g string, err error) {
	summary := fmt.Sprintf("Failed to create group %q under stream prefix %q", g, p)
	switch {
	case errors.Is(err, errCreatedByOther):
		diags.AddError("Group already exists", err.Error()+"\n\n"+importHint(p, g))
	case client.IsConflict(err, client.CodeGroupAlreadyExists):
		addAPIError(diags, "Group already exists", err, importHint(p, g))
	case client.IsConflict(err, client.CodeStreamPrefixAlreadyExists):
		addAPIError(diags, summary, err, fmt.Sprintf(
			"Redis keys for stream prefix %q already exist (for example left behind by a group whose metadata was deleted: a "+
				"metadata delete keeps the Redis streams). Either delete those keys (%s and %s:0..n-1) after making sure nothing "+
				"still reads them, or choose another stream_prefix.", p, p, p))
	case client.IsAmbiguous(err):
		addAPIError(diags, summary, err, "The coordinator could not be reached reliably; nothing is known to have been created. "+
			"Run terraform apply again: the provider checks for the group before creating it again.")
	default:
		addAPIError(diags, summary, err, "")
	}
}

// resolveInitialShardCount picks the shard count for a new group so it routes
// like its siblings: the configured count, which must match the siblings';
// otherwise the siblings' count; otherwise nil (the coordinator's default).
// With strict = false (plan time) mismatches are warnings.
func resolveInitialShardCount(ctx context.Context, listGroups func(context.Context) ([]client.Group, error), p, g string, configured types.Int64, strict bool) (*int32, diag.Diagnostics) {
	var diags diag.Diagnostics
	groups, err := listGroups(ctx)
	if err != nil {
		if strict {
			addAPIError(&diags, "Failed to list the groups under stream prefix "+p, err,
				"The provider reads the other groups of the prefix before creating a group, so that the new group routes with their shard count.")
		}
		return nil, diags
	}
	counts := map[int32][]string{}
	for _, sib := range groups {
		if sib.StreamPrefix == p && sib.ConsumerGroup != g {
			counts[sib.ShardCount] = append(counts[sib.ShardCount], sib.ConsumerGroup)
		}
	}
	report := diags.AddError
	if !strict {
		report = diags.AddWarning
	}
	siblingList := describeSiblings(counts)
	if !configured.IsNull() && !configured.IsUnknown() {
		want := int32(configured.ValueInt64())
		if len(counts) == 0 || (len(counts) == 1 && len(counts[want]) > 0) {
			return &want, diags
		}
		report("Shard count differs from the other groups of the stream prefix", fmt.Sprintf(
			"Stream prefix %q already has %s. A new group %q with initial_shard_count = %d would route differently: producers use one "+
				"shard count per prefix, so messages would be stranded on shards this group never reads. Nothing was sent to the coordinator.\n\n"+
				"Omit initial_shard_count to take the siblings' count, set it to theirs, or change the prefix's count first with "+
				"redisstreamcoordinator_group_shard_count.", p, siblingList, g, want))
		return nil, diags
	}
	switch len(counts) {
	case 0:
		return nil, diags
	case 1:
		for c := range counts {
			if c < 1 {
				report("Cannot inherit a shard count of 0", fmt.Sprintf(
					"Stream prefix %q has %s: it is drained to 0 shards, and a group needs at least 1. Set initial_shard_count explicitly.", p, siblingList))
				return nil, diags
			}
			tflog.Info(ctx, "new group takes the shard count of its siblings", map[string]any{"stream_prefix": p, "consumer_group": g, "shard_count": c})
			return &c, diags
		}
	}
	report("The other groups of the stream prefix disagree on the shard count", fmt.Sprintf(
		"Stream prefix %q has %s, so there is no single count for group %q to inherit. Set initial_shard_count explicitly, "+
			"and align the existing groups with redisstreamcoordinator_group_shard_count.", p, siblingList, g))
	return nil, diags
}

func describeSiblings(counts map[int32][]string) string {
	var parts []string
	for c, names := range counts {
		sort.Strings(names)
		for _, n := range names {
			parts = append(parts, fmt.Sprintf("%q (%d shards)", n, c))
		}
	}
	sort.Strings(parts)
	if len(parts) == 1 {
		return "group " + parts[0]
	}
	return "groups " + strings.Join(parts, ", ")
}

func (m *groupResourceModel) fill(g *client.Group) {
	m.ID = types.StringValue(groupID(g.StreamPrefix, g.ConsumerGroup))
	m.ShardCount = types.Int64Value(int64(g.ShardCount))
	if m.InitialShardCount.IsNull() || m.InitialShardCount.IsUnknown() {
		m.InitialShardCount = types.Int64Value(int64(g.ShardCount))
	}
	m.StreamKeyPattern = types.StringValue(routing.StreamKeyPattern(g.StreamPrefix))
}

func (r *groupResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state groupResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	p, g := state.StreamPrefix.ValueString(), state.ConsumerGroup.ValueString()
	group, err := r.pd.readGroup(ctx, p, g)
	if client.IsNotFound(err) {
		tflog.Warn(ctx, "group no longer exists on the coordinator; removing it from state", map[string]any{"stream_prefix": p, "consumer_group": g})
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Failed to read group %q under stream prefix %q", g, p), err, "")
		return
	}
	state.fill(group)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update changes only Terraform-side settings: no group field can be changed
// through the coordinator's API.
func (r *groupResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state groupResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan.ID, plan.ShardCount, plan.StreamKeyPattern = state.ID, state.ShardCount, state.StreamKeyPattern
	if plan.InitialShardCount.IsUnknown() {
		plan.InitialShardCount = state.InitialShardCount
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *groupResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state groupResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	p, g := state.StreamPrefix.ValueString(), state.ConsumerGroup.ValueString()
	if state.DeletionPolicy.ValueString() != deletionPolicyDelete {
		resp.Diagnostics.AddWarning("Group left on the coordinator", fmt.Sprintf(
			"deletion_policy is %q, so group %q under stream prefix %q was only removed from Terraform state; its metadata stays on "+
				"the coordinator. To delete it through Terraform, set deletion_policy = \"DELETE\", apply, then destroy.",
			deletionPolicyAbandon, g, p))
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, defaultGroupDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	api := r.pd.api
	force := state.ForceDelete.ValueBool()
	m := client.Mutation{RequestedBy: state.RequestedBy.ValueString(), Reason: state.Reason.ValueString()}
	_, err := api.DeleteGroup(ctx, p, g, force, m)
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

// liveMembersHint names the live members blocking a delete, best effort.
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

// liveMembers are the group's ACTIVE or STARTING members with an unexpired lease.
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
	importGroupID(ctx, req.ID, resp, map[string]any{"deletion_policy": deletionPolicyAbandon, "force_delete": false})
}

func (r *groupResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		var state groupResourceModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if !resp.Diagnostics.HasError() && state.DeletionPolicy.ValueString() != deletionPolicyDelete {
			resp.Diagnostics.AddWarning("Destroy will leave the group on the coordinator", fmt.Sprintf(
				"Group %q under stream prefix %q has deletion_policy = %q: destroying removes it from Terraform state only.",
				state.ConsumerGroup.ValueString(), state.StreamPrefix.ValueString(), state.DeletionPolicy.ValueString()))
		}
		return
	}
	var plan groupResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if req.State.Raw.IsNull() {
		// Best effort: the authoritative check runs again in Create, since
		// siblings created in the same apply are not visible yet.
		if r.pd != nil && !plan.StreamPrefix.IsUnknown() && !plan.ConsumerGroup.IsUnknown() && !plan.InitialShardCount.IsUnknown() {
			_, diags := resolveInitialShardCount(ctx, r.pd.groupsForPlan, plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString(), plan.InitialShardCount, false)
			resp.Diagnostics.Append(diags...)
		}
		return
	}
	var state groupResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !plan.InitialShardCount.IsUnknown() && !plan.InitialShardCount.Equal(state.InitialShardCount) {
		resp.Diagnostics.AddAttributeWarning(path.Root("initial_shard_count"), "initial_shard_count only applies at creation", fmt.Sprintf(
			"Changing initial_shard_count of the existing group %q changes nothing on the coordinator (it has %d shards now). "+
				"To change the shard count, use a redisstreamcoordinator_group_shard_count resource for stream prefix %q.",
			state.ConsumerGroup.ValueString(), state.ShardCount.ValueInt64(), state.StreamPrefix.ValueString()))
	}
}
