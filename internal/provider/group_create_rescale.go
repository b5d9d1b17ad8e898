package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
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
// create of a group that exists), and the prefix is split: the next plan of
// the prefix's shard count resource shows it, and its apply repairs it
// (group_shard_count_split.go). Nothing is owed by the group itself.

// groupScaler is the scaler whose scaleGroup (the per-group scale, with its
// lost-answer read-back) brings group g of prefix p to target.
//
// Its step is journaled in the run (prefix.Run) with an empty plan: it
// brings a group this run created to a count the run's own change already
// explained, and explains no sibling's move itself.
func (r *groupResource) groupScaler(p, g string, target int32, requestedBy, reason string, diags *diag.Diagnostics) *scaler {
	return &scaler{
		api: r.pd.api, timing: r.pd.timing, locks: r.pd.prefixLocks, p: p, g: g, target: target, diags: diags,
		mutation: client.Mutation{RequestedBy: requestedBy, Reason: reason},
		run:      &r.pd.run, planned: map[string]int64{}, reads: r.pd.groups,
	}
}

// rescaleCreated brings the group just created to the count this apply's
// stream scale took its siblings to. State keeps the create's answer
// (shard_count is the count the group was created with).
// It returns false when the scale did not take effect.
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
				"(%d for group %q, %d for the others) until it does.\n\nThe group is created and recorded in state. The prefix is "+
				"split: the next terraform plan shows an update of its redisstreamcoordinator_group_shard_count that brings every "+
				"group to one count; run terraform apply.", p, target, g, create.RequestID, from, target, p, g, from, g, target))
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
