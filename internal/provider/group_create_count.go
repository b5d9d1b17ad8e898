package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// The count a group is created with is decided when it is created, from the
// prefix as it is then (one listing, under the prefix lock, so groups this
// apply creates see each other). A saved plan cannot carry a count read from
// the siblings to the apply: Terraform plans the create again at apply from
// configuration alone and refuses values that differ from the saved plan's.
// So the plan shows what the configuration fixes (a configured
// initial_shard_count) and leaves what the siblings decide unknown, with
// their count now in a warning (planCreate); the create takes the
// siblings' count as it finds it, and a prefix never ends at two counts.
//
// The siblings are the prefix's groups as listed, this apply's creates
// included, and the groups this apply deleted (a replacement's or a
// rename's old group), which the plan counted. A configured count must
// match them. A sibling this run's own change
// of the prefix (the shard count resource's steps, prefix.Run) took from
// the configured count to another is no mismatch: the plan showed that
// change, and the group joins the prefix at the count it took the siblings
// to, so that no group sends a scale of its own.

// createCount returns the count to create group g of prefix p with (nil:
// the coordinator's default) and its siblings as found, the create's basis
// (sibling_shard_counts).
func (r *groupResource) createCount(ctx context.Context, p, g string, configured types.Int64, diags *diag.Diagnostics) (*int32, types.Map, bool) {
	all, err := r.pd.api.Groups(ctx)
	if err != nil {
		addAPIError(diags, "Failed to list the groups under stream prefix "+p, err,
			"The provider reads the other groups of the prefix before creating a group, so that the new group routes with their "+
				"shard count. Nothing was sent for this create.")
		return nil, types.MapNull(types.Int64Type), false
	}
	siblings := r.pd.plans.withDeleted(prefix.FromListing(all, p)).Without(g)
	basis := map[string]attr.Value{}
	for _, grp := range siblings.Groups {
		basis[grp.ConsumerGroup] = types.Int64Value(int64(grp.ShardCount))
	}
	want := configured
	if c := int64Ptr(configured); c != nil {
		if moved, ok := r.movedByRun(p, siblings, int32(*c)); ok {
			want = types.Int64Value(int64(moved))
			diags.AddWarning(fmt.Sprintf("Group %s/%s created at its stream prefix's new shard count", p, g), fmt.Sprintf(
				"This apply scaled stream prefix %q from %d to %d shards (redisstreamcoordinator_group_shard_count) before it created "+
					"group %q, configured with initial_shard_count = %d. The group was created with %d shards, the count the prefix "+
					"now has, so the prefix keeps one shard count; initial_shard_count keeps the configured value.", p, *c, moved, g, *c, moved))
		}
	}
	count, d := resolveInitialShardCount(ctx, siblings.Groups, p, g, want)
	diags.Append(d...)
	if d.HasError() && r.pd.plans.deletedInRun(p, g) {
		diags.AddError(fmt.Sprintf("Group %s/%s was deleted by this apply and not created again", p, g), fmt.Sprintf(
			"This apply deleted group %q of stream prefix %q to replace it, and the prefix changed before its create, which was "+
				"refused (above). The group stays deleted until an apply creates it again: run terraform plan, which shows that create, "+
				"and apply it.", g, p))
	}
	return count, types.MapValueMust(types.Int64Type, basis), !d.HasError()
}

// movedByRun reports the count this run's own change took every sibling at
// another count than configured to, when there is one.
func (r *groupResource) movedByRun(p string, siblings prefix.Record, configured int32) (int32, bool) {
	var moved int32
	for _, grp := range siblings.Groups {
		if grp.ShardCount == configured {
			continue
		}
		if !r.pd.run.Explains(p, grp.ConsumerGroup, int64(configured), int64(grp.ShardCount)) || (moved != 0 && moved != grp.ShardCount) {
			return 0, false
		}
		moved = grp.ShardCount
	}
	return moved, moved != 0
}
