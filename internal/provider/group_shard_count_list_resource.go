package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// NewGroupShardCountListResource is the redisstreamcoordinator_group_shard_count list resource.
func NewGroupShardCountListResource() list.ListResource {
	return &groupListResource{name: "group_shard_count", noun: "stream prefixes", perPrefix: true, fill: fillImportedShardCount,
		description: "The shard count of every stream prefix on the coordinator, or of one, as " +
			"`redisstreamcoordinator_group_shard_count` resources to import with `terraform query` (Terraform 1.14 or later): one result per prefix."}
}

// firstGroupPerPrefix expects groups ordered by prefix, then name.
func firstGroupPerPrefix(groups []*client.Group) []*client.Group {
	var out []*client.Group
	for _, g := range groups {
		if len(out) == 0 || out[len(out)-1].StreamPrefix != g.StreamPrefix {
			out = append(out, g)
		}
	}
	return out
}

// fillImportedShardCount sets res to what an import of grp and a refresh record.
func fillImportedShardCount(ctx context.Context, res *tfsdk.Resource, grp *client.Group) diag.Diagnostics {
	var m groupShardCountModel
	diags := nullResourceModel(ctx, res, &m)
	if diags.HasError() {
		return diags
	}
	m.ID = types.StringValue(groupID(grp.StreamPrefix, grp.ConsumerGroup))
	m.StreamPrefix, m.ConsumerGroup = types.StringValue(grp.StreamPrefix), types.StringValue(grp.ConsumerGroup)
	m.WaitFor, m.RollbackOnRevert = types.StringValue(waitForCompletion), types.BoolValue(false)
	m.MigrationIDs = types.MapValueMust(types.StringType, nil)
	m.ShardCount = types.Int64Value(int64(grp.ShardCount))
	m.MetadataVersion, _ = observeMetadataVersion(types.Int64Null(), grp.MetadataVersion)
	recordUnderWay(ctx, &m, grp, &diags)
	diags.Append(writeModel(ctx, res.Schema, &res.Raw, &m, res.Set)...)
	return diags
}
