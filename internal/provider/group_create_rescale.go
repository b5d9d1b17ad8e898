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
// (the client's rule), and the create then fails with what is left, so
// Terraform marks the group tainted and the next apply re-creates it with
// the prefix's count.

// rescaleCreated brings the group just created to the count this apply's
// stream scale took its siblings to. State keeps the create's answer
// (shard_count is the count the group was created with).
func (r *groupResource) rescaleCreated(ctx context.Context, p, g string, target int32, created *client.Group, create client.Mutation, diags *diag.Diagnostics) {
	s := &scaler{
		api: r.pd.api, locks: r.pd.prefixLocks, p: p, g: g, target: target, diags: diags,
		mutation: client.Mutation{RequestedBy: create.RequestedBy, Reason: create.Reason},
	}
	from := created.ShardCount
	tflog.Info(ctx, "group created after its prefix's stream scale in the same apply; scaling it to the prefix's count", map[string]any{
		"stream_prefix": p, "consumer_group": g, "created_with": from, "target_shard_count": target, "create_request_id": create.RequestID,
	})
	mig, err := s.scaleGroup(ctx, *created)
	r.pd.noteMutation(p)
	if err != nil {
		addAPIError(diags, fmt.Sprintf("Group %s/%s was created, but not brought to its stream prefix's new shard count", p, g), err, fmt.Sprintf(
			"This apply scaled stream prefix %q to %d shards (redisstreamcoordinator_group_shard_count) before it created group %q "+
				"(request id %s) with the %d shards the plan resolved, so the provider scaled the new group to %d with the per-group "+
				"scale (POST /streams/%s/groups/%s/scale), and that failed: the prefix now routes with two shard counts (%d for group "+
				"%q, %d for the others).\n\nThe group is recorded in state as tainted: the next terraform apply replaces it, and "+
				"the new group takes the prefix's %d shards. To keep this group instead, scale it yourself with the call above "+
				"(targetShardCount %d) and run `terraform untaint` on it.",
			p, target, g, create.RequestID, from, target, p, g, from, g, target, target, target))
		return
	}
	diags.AddWarning(fmt.Sprintf("Group %s/%s scaled to its stream prefix's new count after its create", p, g), fmt.Sprintf(
		"This apply scaled stream prefix %q to %d shards before it created group %q (Terraform does not order the two unless "+
			"the configuration makes the shard count resource depend on the group). The group was created with the %d shards the "+
			"plan resolved (request id %s) and then scaled to %d with the per-group scale (migration %s), so the prefix keeps one "+
			"shard count. shard_count records the count it was created with.",
		p, target, g, from, create.RequestID, target, mig.ReshardingID))
}
