package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// Terraform re-plans the create at apply from configuration alone, so the plan
// leaves what the siblings decide unknown and the create decides it, under the
// prefix lock.

// createCount returns nil for the coordinator's default.
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
		// Siblings at another count: all moved to one count by this run's own scale.
		moved, byRun := int32(0), true
		for _, grp := range siblings.Groups {
			if grp.ShardCount != int32(*c) {
				byRun = byRun && (moved == 0 || moved == grp.ShardCount) &&
					r.pd.plans.explains(p, grp.ConsumerGroup, *c, int64(grp.ShardCount))
				moved = grp.ShardCount
			}
		}
		if byRun && moved != 0 {
			want = types.Int64Value(int64(moved))
			diags.AddWarning(fmt.Sprintf("Group %s/%s created at its stream prefix's new shard count", p, g), fmt.Sprintf(
				"This apply scaled stream prefix %q from %d to %d shards (redisstreamcoordinator_group_shard_count) before it created "+
					"group %q, configured with initial_shard_count = %d. The group was created with %d shards, the count the prefix "+
					"now has, so the prefix keeps one shard count; initial_shard_count keeps the configured value.", p, *c, moved, g, *c, moved))
		}
	}
	count, d := resolveInitialShardCount(ctx, siblings.Groups, p, g, want, sentBefore(&r.pd.plans, p))
	diags.Append(d...)
	return count, types.MapValueMust(types.Int64Type, basis), !d.HasError()
}
