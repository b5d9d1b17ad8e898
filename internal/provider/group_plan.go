package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

type groupVanished struct {
	ShardCount      int64  `json:"shard_count"`
	MetadataVersion int64  `json:"metadata_version"`
	StreamPrefix    string `json:"stream_prefix,omitempty"`
	ConsumerGroup   string `json:"consumer_group,omitempty"`
}

// of: a rename creates a new group, not a re-creation of the vanished one.
func (v *groupVanished) of(p, g string) bool {
	return v != nil && (v.ConsumerGroup == "" || (v.StreamPrefix == p && v.ConsumerGroup == g))
}

var recreationAttrTypes = map[string]attr.Type{
	"previous_shard_count":       types.Int64Type,
	"last_metadata_version_seen": types.Int64Type,
	"new_lifecycle":              types.StringType,
}

func recreationNull() types.Object { return types.ObjectNull(recreationAttrTypes) }

func recreationValue(p, g string, v *groupVanished) types.Object {
	return types.ObjectValueMust(recreationAttrTypes, map[string]attr.Value{
		"previous_shard_count":       types.Int64Value(v.ShardCount),
		"last_metadata_version_seen": types.Int64Value(v.MetadataVersion),
		"new_lifecycle": types.StringValue(fmt.Sprintf("Group %q of stream prefix %q vanished from the coordinator (404 on refresh) "+
			"after this resource had seen it with %d shards at metadataVersion %d. Re-creating it starts a new lifecycle: the new "+
			"group starts again at metadataVersion 1 with no members; consumers and producers must rejoin as new (restart consumers "+
			"so they join with new member ids; producers re-read routing). Nothing carries over from the old group.",
			g, p, v.ShardCount, v.MetadataVersion)),
	})
}

type groupHighest struct {
	MetadataVersion int64 `json:"metadata_version"`
	ShardCount      int64 `json:"shard_count"`
}

func readGroupHighest(ctx context.Context, private privateGetter) (groupHighest, diag.Diagnostics) {
	rec, diags := readPrivateRecord(ctx, private)
	if rec.GroupHighest == nil {
		return groupHighest{}, diags
	}
	return *rec.GroupHighest, diags
}

func (r *groupResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	resp.Diagnostics.Append(clearCreateBasis(ctx, resp.Private)...)
	var plan, state groupResourceModel
	destroy := req.Plan.Raw.IsNull()
	if !destroy {
		resp.Diagnostics.Append(getPlan(ctx, req.Plan, &plan)...)
	}
	if req.State.Raw.IsNull() {
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.Append(newNameWarnings(plan.StreamPrefix, plan.ConsumerGroup)...)
			r.planCreate(ctx, req, resp, &plan)
		}
		if !resp.Diagnostics.HasError() {
			resp.Diagnostics.Append(setPlan(ctx, &resp.Plan, &plan)...)
		}
		return
	}
	resp.Diagnostics.Append(getState(ctx, req.State, &state)...)
	rec, diags := readPrivateRecord(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	vanished := rec.GroupVanished
	if resp.Diagnostics.HasError() || destroy && vanished != nil {
		return
	}
	p, g := state.StreamPrefix.ValueString(), state.ConsumerGroup.ValueString()
	ack := plan.AcknowledgedMetadataVersion
	if !destroy {
		// With DELETE a -replace deletes the old group first: no conflict.
		deletes := state.DeletionPolicy.ValueString() == deletionPolicyDelete
		renamed := !plan.StreamPrefix.Equal(state.StreamPrefix) || !plan.ConsumerGroup.Equal(state.ConsumerGroup)
		r.pd.plans.note(p, g, func(rg *runGroup) {
			rg.deletesOnReplace, rg.renamedAway = deletes, rg.renamedAway || deletes && renamed
		})
	}
	switch {
	case destroy && state.DeletionPolicy.ValueString() != deletionPolicyDelete:
		resp.Diagnostics.AddWarning("Destroy will leave the group on the coordinator", fmt.Sprintf(
			"Group %q under stream prefix %q has deletion_policy = %q: destroying removes it from Terraform state only.",
			g, p, state.DeletionPolicy.ValueString()))
		return
	case destroy:
		// Deleting metadata is an admin mutation: fail closed (ABANDON sends nothing).
		ack = state.AcknowledgedMetadataVersion
	case vanished != nil:
		plan.Recreation = recreationValue(p, g, vanished)
		plan.MetadataVersion = types.Int64Unknown()
		plan.ShardCount = types.Int64Unknown()
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("recreation"), path.Root("metadata_version"))
		resp.Diagnostics.Append(setPlan(ctx, &resp.Plan, &plan)...)
		return
	}
	reg := rec.MetadataRegression
	checkMetadataRegression(&resp.Diagnostics, "redisstreamcoordinator_group", p, g, reg, ack)
	if destroy || resp.Diagnostics.HasError() {
		return
	}
	plan.MetadataVersion = state.MetadataVersion
	if reg != nil {
		// Unknown when already equal, so the apply still records it.
		plan.MetadataVersion = types.Int64Value(ack.ValueInt64())
		if state.MetadataVersion.ValueInt64() == ack.ValueInt64() {
			plan.MetadataVersion = types.Int64Unknown()
		}
	}
	plan.Recreation = state.Recreation
	plan.SiblingShardCounts = state.SiblingShardCounts
	resp.Diagnostics.Append(setPlan(ctx, &resp.Plan, &plan)...)

	if !plan.InitialShardCount.IsUnknown() && !plan.InitialShardCount.Equal(state.InitialShardCount) {
		resp.Diagnostics.AddAttributeWarning(path.Root("initial_shard_count"), "initial_shard_count only applies at creation", fmt.Sprintf(
			"Changing initial_shard_count of the existing group %q changes nothing on the coordinator (it has %d shards now). "+
				"To change the shard count, use a redisstreamcoordinator_group_shard_count resource for stream prefix %q.",
			g, state.ShardCount.ValueInt64(), p))
	}
}

func (r *groupResource) planCreate(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, plan *groupResourceModel) {
	// shard_count, metadata_version and sibling_shard_counts stay (known after
	// apply): the create decides them from a live read (createCount) that
	// Terraform's apply-time plan cannot reproduce.
	plan.Recreation = recreationNull()
	if plan.StreamPrefix.IsUnknown() || plan.ConsumerGroup.IsUnknown() {
		return
	}
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	plan.ID = types.StringValue(groupID(p, g))
	plan.StreamKeyPattern = types.StringValue(routing.StreamKeyPattern(p))

	rec, diags := readPrivateRecord(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	vanished := rec.GroupVanished
	if vanished == nil {
		vanished = r.pd.plans.of(p, g).vanished
	}
	if vanished.of(p, g) {
		plan.Recreation = recreationValue(p, g, vanished)
	}

	if r.pd.unconfigured() {
		resp.Diagnostics.AddWarning("Plan-time checks skipped: the provider configuration is unknown until apply", fmt.Sprintf(
			"The create of group %q under stream prefix %q was planned without reading the prefix's other groups: initial_shard_count "+
				"is (known after apply) unless set, and the sibling shard-count check runs at apply instead, before the create is sent (when it "+
				"replaces a group with deletion_policy = \"DELETE\", that group is deleted first, unchecked). "+
				"This plan is not reviewed against the coordinator. %s", g, p, r.pd.unconfiguredDetail()))
		r.pd.plans.registerGroupCreate(p, g, int64Ptr(plan.InitialShardCount))
		return
	}
	// A count known only after apply is resolved then; its siblings are still
	// the basis that a replacement's delete re-checks before it is sent.
	var configured types.Int64
	if plan.InitialShardCount.IsUnknown() && !req.Config.Raw.IsNull() {
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("initial_shard_count"), &configured)...)
	}

	groups, err := r.pd.groupsForPlan(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Cannot plan group %q under stream prefix %q: listing the coordinator's groups failed", g, p), err,
			"The plan reads the prefix's existing groups to check the new group's shard count against them (and, for a replacement, to "+
				"record what its delete re-checks), and fails rather than pass unchecked. "+
				"A READ principal is enough to plan (the listing is GET /monitoring/groups).")
		return
	}
	// Terraform plans each create again during apply after some of this apply's
	// creates and deletes; that plan must give the same values (planBasisOfPrefix).
	prefix, deletedSelf := planBasisOfPrefix(&r.pd.plans, groups, p, g)
	self, selfExists := prefix[g]
	delete(prefix, g)
	replacedSelf := deletedSelf || (selfExists && r.pd.plans.of(p, g).deletesOnReplace)
	if selfExists && !replacedSelf {
		resp.Diagnostics.AddError("Group already exists",
			fmt.Sprintf("The coordinator already has group %q under stream prefix %q (%d shards, metadataVersion %d), so creating it would fail. Nothing was sent.\n\n",
				g, p, self.ShardCount, self.MetadataVersion)+importHint(p, g))
		return
	}
	basis := slices.Collect(maps.Values(prefix))
	recorded := basis
	if replacedSelf && len(basis) == 0 && int64Ptr(plan.InitialShardCount) == nil && !configured.IsUnknown() && self.ShardCount >= 1 {
		// The replacement takes the count of the group it replaces: that
		// group is its basis too, checked before the delete.
		plan.InitialShardCount = types.Int64Value(int64(self.ShardCount))
		recorded = []client.Group{self}
	}
	resp.Diagnostics.Append(recordCreateBasis(ctx, resp.Private, p, recorded)...)
	if configured.IsUnknown() {
		r.pd.plans.registerGroupCreate(p, g, nil)
		return
	}
	if !r.checkPrefixKeptByReplacement(ctx, p, g, basis, self, replacedSelf && !deletedSelf, &resp.Diagnostics) {
		return
	}

	count, diags := resolveInitialShardCount(ctx, basis, p, g, plan.InitialShardCount, sentBefore(&r.pd.plans, p))
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	if len(basis) == 0 || drainedSiblings(basis) {
		// Registering and reading the others is one locked step, so of two creates
		// planned at once the later always sees the earlier.
		self := plannedGroupCreate{InitialShardCount: int64Ptr(plan.InitialShardCount), Unset: plan.InitialShardCount.IsNull() || plan.InitialShardCount.IsUnknown()}
		checkPlannedTogether(p, g, self, r.pd.plans.registerGroupCreateOfPrefix(p, g, self), &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	planned := int64Ptr(plan.InitialShardCount)
	if count != nil {
		if planned == nil {
			resp.Diagnostics.AddAttributeWarning(path.Root("initial_shard_count"), fmt.Sprintf("Group %s/%s takes its siblings' shard count, %d now", p, g, *count), fmt.Sprintf(
				"Stream prefix %q has %s, and group %q sets no initial_shard_count: it is created with the count its siblings have "+
					"when the create runs, %d if nothing changes before then. initial_shard_count and shard_count are therefore "+
					"(known after apply): a sibling scaled after this plan is followed, and the prefix keeps one shard count.",
				p, describeSiblings(countsOf(basis)), g, *count))
		}
		if !siblingHasCount(basis, *count) {
			largeShardCountWarning(&resp.Diagnostics, "initial_shard_count", int64(*count), fmt.Sprintf("Group %q under stream prefix %q is created with", g, p))
		}
		n := int64(*count)
		planned = &n
	}
	r.pd.plans.registerGroupCreate(p, g, planned)
}

func countsOf(groups []client.Group) map[int32][]string {
	out := map[int32][]string{}
	for _, grp := range groups {
		out[grp.ShardCount] = append(out[grp.ShardCount], grp.ConsumerGroup)
	}
	return out
}

func int64Ptr(v types.Int64) *int64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	n := v.ValueInt64()
	return &n
}

// resolveInitialShardCount returns nil for the coordinator's default; siblings are
// the other groups of prefix p.
func resolveInitialShardCount(ctx context.Context, siblings []client.Group, p, g string, configured types.Int64, sent string) (*int32, diag.Diagnostics) {
	var diags diag.Diagnostics
	counts := countsOf(siblings)
	siblingList := describeSiblings(counts)
	if c := int64Ptr(configured); c != nil {
		want := int32(*c)
		if len(counts) == 0 || (len(counts) == 1 && len(counts[want]) > 0) {
			return &want, diags
		}
		if drainedPrefix(counts) {
			diags.Append(drainedPrefixWarning(p, g, want, siblingList))
			return &want, diags
		}
		diags.AddError("Shard count differs from the other groups of the stream prefix", fmt.Sprintf(
			"Stream prefix %q already has %s. A new group %q with initial_shard_count = %d would route differently: producers use one "+
				"shard count per prefix, so messages would be stranded on shards this group never reads. %s\n\n"+
				"Omit initial_shard_count to take the siblings' count, set it to theirs, or change the prefix's count first with "+
				"redisstreamcoordinator_group_shard_count.", p, siblingList, g, want, sent))
		return nil, diags
	}
	switch {
	case len(counts) == 0:
		return nil, diags
	case drainedPrefix(counts):
		diags.AddError("Cannot inherit a shard count of 0", fmt.Sprintf(
			"Stream prefix %q has %s: it is drained to 0 shards. The coordinator creates a group with at least 1 shard "+
				"(initialShardCount >= 1) and a new group does not inherit its siblings' count, so there is no count to take "+
				"from them. Set initial_shard_count (1 or more) explicitly: the group is then created with that count, at a "+
				"different count than its 0-shard siblings, and the plan says how to bring the prefix back to one count.", p, siblingList))
		return nil, diags
	case len(counts) == 1:
		c := siblings[0].ShardCount
		tflog.Info(ctx, "new group takes the shard count of its siblings", map[string]any{"stream_prefix": p, "consumer_group": g, "shard_count": c})
		return &c, diags
	}
	diags.AddError("The other groups of the stream prefix disagree on the shard count", fmt.Sprintf(
		"Stream prefix %q has %s, so there is no single count for group %q to inherit. Set initial_shard_count explicitly, "+
			"and align the existing groups with redisstreamcoordinator_group_shard_count.", p, siblingList, g))
	return nil, diags
}

func sentBefore(reg *planRegistry, p string) string {
	gone := reg.withDeleted(prefix.Record{Prefix: p}).Groups
	if len(gone) == 0 {
		return "Nothing was sent to the coordinator."
	}
	names := make([]string, len(gone))
	for i, grp := range gone {
		names[i] = fmt.Sprintf("%q", grp.ConsumerGroup)
	}
	return fmt.Sprintf("Nothing was sent for this create, but this apply already deleted group %s of the prefix, the old half of a "+
		"replacement: it stays deleted until an apply creates it again, and the next terraform plan shows that create.", strings.Join(names, ", "))
}

func describeSiblings(counts map[int32][]string) string {
	var parts []string
	for c, names := range counts {
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
