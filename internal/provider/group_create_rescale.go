package provider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// A group created in the apply that also scales its stream prefix
// (redisstreamcoordinator_group_shard_count), after that scale.
//
// Terraform does not order a group's create (or the delete and create of its
// replacement) and a stream-level scale of its prefix unless the
// configuration says so. Created first, the group is one of the groups the
// stream scale rescales. Created after, it would be the only group left at
// the count the plan resolved for it (the siblings' count at plan time), and
// the prefix would route with two counts. So the create is sent as planned
// (the count the plan showed, recorded in state), and the group is then
// brought to the scale's target with the per-group scale (CONTRACT §4.7),
// audited like every mutation, before anything else can use the prefix's
// new count. Either way the prefix ends at the count the plan showed for it.
//
// The per-group scale is a new mutation: after an interrupt it is not sent
// (the client's rule). The create stands (the group exists and is recorded
// in state, untainted: a tainted group's replacement would be planned as a
// create of a group that exists), and what it owes is recorded in private
// state (privateRescaleOwed): the next plan shows an update that sends the
// per-group scale, to the count the prefix's other groups then share, and
// the apply warns until then.

// privateRescaleOwed holds the count a group created after its prefix's
// stream scale still has to be brought to (rescaleOwed).
const privateRescaleOwed = "rescale_owed"

type rescaleOwed struct {
	Target          int32  `json:"target"`
	CreateRequestID string `json:"create_request_id"`
}

func readRescaleOwed(ctx context.Context, private privateGetter) (*rescaleOwed, diag.Diagnostics) {
	b, diags := private.GetKey(ctx, privateRescaleOwed)
	if diags.HasError() || len(b) == 0 {
		return nil, diags
	}
	var o rescaleOwed
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, diags
	}
	return &o, diags
}

func setRescaleOwed(ctx context.Context, private privateSetter, o *rescaleOwed) diag.Diagnostics {
	if o == nil {
		return private.SetKey(ctx, privateRescaleOwed, nil)
	}
	b, _ := json.Marshal(o)
	return private.SetKey(ctx, privateRescaleOwed, b)
}

// groupScaler is the scaler whose scaleGroup (the per-group scale, with its
// lost-answer read-back) brings group g of prefix p to target.
func (r *groupResource) groupScaler(p, g string, target int32, requestedBy, reason string, diags *diag.Diagnostics) *scaler {
	return &scaler{
		api: r.pd.api, locks: r.pd.prefixLocks, p: p, g: g, target: target, diags: diags,
		mutation: client.Mutation{RequestedBy: requestedBy, Reason: reason},
	}
}

// rescaleCreated brings the group just created to the count this apply's
// stream scale took its siblings to. State keeps the create's answer
// (shard_count is the count the group was created with).
// It returns false when the group still owes the scale.
func (r *groupResource) rescaleCreated(ctx context.Context, p, g string, target int32, created *client.Group, create client.Mutation, diags *diag.Diagnostics) bool {
	s := r.groupScaler(p, g, target, create.RequestedBy, create.Reason, diags)
	from := created.ShardCount
	tflog.Info(ctx, "group created after its prefix's stream scale in the same apply; scaling it to the prefix's count", map[string]any{
		"stream_prefix": p, "consumer_group": g, "created_with": from, "target_shard_count": target, "create_request_id": create.RequestID,
	})
	mig, err := s.scaleGroup(ctx, *created)
	r.pd.noteMutation(p)
	if err != nil {
		addAPIWarning(diags, fmt.Sprintf("Group %s/%s was created, but not yet brought to its stream prefix's new shard count", p, g), err, fmt.Sprintf(
			"This apply scaled stream prefix %q to %d shards (redisstreamcoordinator_group_shard_count) before it created group %q "+
				"(request id %s) with the %d shards the plan resolved, so the provider scales the new group to %d with the per-group "+
				"scale (POST /coord/v1/streams/%s/groups/%s/scale), and that did not happen: the prefix routes with two shard counts "+
				"(%d for group %q, %d for the others) until it does.\n\nThe group is created and recorded in state. The next "+
				"terraform plan shows an update of it that sends this scale (to the count the prefix's other groups have then); "+
				"run terraform apply.", p, target, g, create.RequestID, from, target, p, g, from, g, target))
		return false
	}
	diags.AddWarning(fmt.Sprintf("Group %s/%s scaled to its stream prefix's new count after its create", p, g), fmt.Sprintf(
		"This apply scaled stream prefix %q to %d shards before it created group %q (Terraform does not order the two unless "+
			"the configuration makes the shard count resource depend on the group). The group was created with the %d shards the "+
			"plan resolved (request id %s) and then scaled to %d with the per-group scale (migration %s), so the prefix keeps one "+
			"shard count. shard_count records the count it was created with.",
		p, target, g, from, create.RequestID, target, mig.ReshardingID))
	return true
}

// owedDecision is what a group that owes its per-group scale needs, from
// the prefix's groups: the count the other groups share (target), and
// whether to send the scale (send), or why it cannot be planned (why).
type owedDecision struct {
	self   *client.Group
	target int32
	send   bool
	why    string
}

// decideOwed reads the prefix: the other groups must share one count, with
// no PREPARING migration among them (a count not yet switched); this group's
// own migration is not in the way (a PREPARING one to the target is resumed
// by the same scale, CONTRACT §4.6).
func decideOwed(all []client.Group, p, g string) owedDecision {
	var d owedDecision
	counts := map[int32][]string{}
	preparing := ""
	for i := range all {
		gi := all[i]
		if gi.StreamPrefix != p {
			continue
		}
		if gi.ConsumerGroup == g {
			d.self = &all[i]
			continue
		}
		if am := gi.ActiveMigration; !am.Finished() && am.State == client.MigrationPreparing {
			preparing = describeMigration(gi)
		}
		counts[gi.ShardCount] = append(counts[gi.ShardCount], gi.ConsumerGroup)
	}
	switch {
	case d.self == nil:
		return d
	case preparing != "":
		d.why = preparing + " has not switched its count yet"
		return d
	case len(counts) != 1:
		d.why = "the other groups have " + describeSiblings(counts)
		return d
	}
	for c := range counts {
		d.target = c
	}
	am := d.self.ActiveMigration
	d.send = d.self.ShardCount != d.target || (!am.Finished() && am.State == client.MigrationPreparing && am.ToShardCount == d.target)
	return d
}

// planOwedRescale is the group's plan while a create still owes its
// per-group scale (privateRescaleOwed): an update that sends it, to the
// count the prefix's other groups share, shown as metadata_version (known
// after apply) with a warning; the apply decides again from a fresh read
// (applyOwedRescale). Nothing is planned when the group already has that
// count (a refresh clears the mark once it has the count owed); the plan
// only warns when the other groups disagree or one has not switched its
// count yet.
func (r *groupResource) planOwedRescale(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, plan *groupResourceModel) {
	owed, diags := readRescaleOwed(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	if owed == nil || r.pd.unconfigured() {
		return
	}
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	all, err := r.pd.groupsForPlan(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Cannot plan group %q under stream prefix %q: listing the coordinator's groups failed", g, p), err,
			"The group still owes the per-group scale to its prefix's count (its create came after the prefix's stream scale), and the plan "+
				"reads the prefix's groups to plan it. Fix the cause above and plan again.")
		return
	}
	d := decideOwed(all, p, g)
	switch {
	case d.self == nil:
		return // vanished: Read records it, and the plan re-creates it
	case d.why != "":
		resp.Diagnostics.AddWarning(fmt.Sprintf("Group %s/%s is not at its stream prefix's shard count", p, g), fmt.Sprintf(
			"Group %q was created (request id %s) after this configuration scaled stream prefix %q to %d shards, and the per-group scale "+
				"that brings it there did not take effect. It has %d shards; %s, so the provider cannot tell which count to bring it to yet. "+
				"Align the prefix with redisstreamcoordinator_group_shard_count (or scale group %q with POST /coord/v1/streams/%s/groups/%s/scale), "+
				"and plan again.", g, owed.CreateRequestID, p, owed.Target, d.self.ShardCount, d.why, g, p, g))
		return
	case !d.send:
		return
	}
	plan.MetadataVersion = types.Int64Unknown()
	resp.Diagnostics.AddWarning(fmt.Sprintf("Group %s/%s is brought to its stream prefix's shard count", p, g), fmt.Sprintf(
		"Group %q was created (request id %s) after this configuration scaled stream prefix %q, and the per-group scale that brings it "+
			"to the prefix's count did not take effect. This apply sends it: group %q goes from %d to %d shards, the count of the prefix's "+
			"other groups (POST /coord/v1/streams/%s/groups/%s/scale, %.2f%% of partition keys move). The apply reads the prefix again "+
			"first and sends nothing if the group already has their count.", g, owed.CreateRequestID, p, g,
		d.self.ShardCount, d.target, p, g, movedKeyPercent(d.self.ShardCount, d.target)))
}

// applyOwedRescale is Update's part: under the prefix lock, and from a
// fresh listing, the per-group scale planOwedRescale planned, to the count
// the other groups share now. Nothing is sent, and the mark is cleared, when
// the group already has that count (this apply's stream scale of the prefix
// took it along, say); while the other groups disagree, nothing is sent and
// the apply warns.
func (r *groupResource) applyOwedRescale(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, plan groupResourceModel) {
	owed, diags := readRescaleOwed(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	if owed == nil {
		return
	}
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	defer r.pd.prefixLocks.Lock(p)()
	all, err := r.pd.api.Groups(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Failed to list the groups of stream prefix %q", p), err,
			"The apply reads the prefix before the per-group scale group "+g+" owes. Nothing was sent; run terraform apply again.")
		return
	}
	d := decideOwed(all, p, g)
	if d.self == nil {
		return
	}
	if d.why != "" {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Group %s/%s not brought to its stream prefix's shard count", p, g), fmt.Sprintf(
			"The plan showed the per-group scale group %q owes, but the prefix changed since: %s. Nothing was sent; the next plan "+
				"shows what is still owed.", g, d.why))
		return
	}
	if !d.send {
		resp.Diagnostics.Append(setRescaleOwed(ctx, resp.Private, nil)...)
		return
	}
	s := r.groupScaler(p, g, d.target, plan.RequestedBy.ValueString(), plan.Reason.ValueString(), &resp.Diagnostics)
	mig, err := s.scaleGroup(ctx, *d.self)
	r.pd.noteMutation(p)
	if err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Failed to bring group %s/%s to its stream prefix's shard count", p, g), err, fmt.Sprintf(
			"The per-group scale of group %q to %d shards (POST /coord/v1/streams/%s/groups/%s/scale) that its create (request id %s) "+
				"owes did not take effect. It stays owed: the next terraform plan shows it again.", g, d.target, p, g, owed.CreateRequestID))
		return
	}
	tflog.Info(ctx, "group brought to its stream prefix's shard count", map[string]any{
		"stream_prefix": p, "consumer_group": g, "target_shard_count": d.target, "resharding_id": mig.ReshardingID,
	})
	resp.Diagnostics.Append(setRescaleOwed(ctx, resp.Private, nil)...)
}
