package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// An import plans nothing but the import: its apply must not block on someone
// else's resharding. An import whose plan also changes an argument is an
// update that Terraform re-plans during apply in another provider instance,
// so it is planned like that one (importPlansNothing). The import's refresh
// marks private state with its provider instance: a no-op import's private
// state is saved as refreshed, and a later `plan -refresh=false` in another
// instance must not take itself for the import's plan.

func setImportRead(ctx context.Context, private privateSetter, pd *providerData, importing bool) diag.Diagnostics {
	mark := ""
	if importing && pd != nil {
		mark = pd.configuration
	}
	return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.ImportRead = mark })
}

// clearImportRead runs at the top of every plan of an existing shard count, so
// no later plan, one with -refresh=false included, mistakes itself for the import's.
func clearImportRead(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || resp.Private == nil {
		return
	}
	resp.Diagnostics.Append(updatePrivateRecord(ctx, resp.Private, func(r *privateRecord) { r.ImportRead = "" })...)
}

// warnUnderWayAtImport reports a migration under way instead of waiting on it.
func warnUnderWayAtImport(plan groupShardCountModel, seen *client.Group, resp *resource.ModifyPlanResponse) {
	am := prefix.Unfinished(seen)
	if am == nil {
		return
	}
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	switch {
	case am.State == client.MigrationPreparing:
		resp.Diagnostics.AddWarning(fmt.Sprintf("Importing the shard count of stream prefix %q while a migration is PREPARING", p), fmt.Sprintf(
			"Group %q under stream prefix %q has migration %s (%d→%d shards), PREPARING since %s: provisioning its shards failed, and "+
				"the group still has %d shards. A PREPARING migration never moves by itself and blocks every other scale of the prefix "+
				"(409 ACTIVE_MIGRATION_EXISTS), even one back to %d. The import changes nothing; to resume it, set shard_count = %d and "+
				"apply (a scale to its own target resumes the provisioning).", g, p, am.ReshardingID, am.FromShardCount, am.ToShardCount,
			underWaySince(am), seen.ShardCount, am.FromShardCount, am.ToShardCount))
	case underWayMigration(seen) == nil || int64(am.ToShardCount) != plan.ShardCount.ValueInt64():
		// Heading elsewhere: the plan's preview says what the apply does with it.
	case prefix.Stalled(seen):
		resp.Diagnostics.AddWarning(fmt.Sprintf("Importing the shard count of stream prefix %q while a scale-out waits for a consumer", p), fmt.Sprintf(
			"Group %q under stream prefix %q has migration %s (%d→%d shards), ACTIVE since %s, and no live consumer: a scale-out stays "+
				"ACTIVE until a consumer of the group joins and converges, and blocks every other scale of the prefix until then. The "+
				"import records it (migration_ids, migration_state) and changes nothing; start the group's consumers to let it complete, "+
				"or roll it back with the redisstreamcoordinator_rollback_migration action.", g, p, am.ReshardingID, am.FromShardCount,
			am.ToShardCount, underWaySince(am)))
	default:
		resp.Diagnostics.AddWarning(fmt.Sprintf("Importing the shard count of stream prefix %q while a resharding is under way", p), fmt.Sprintf(
			"Group %q under stream prefix %q: %s. The import records it (migration_ids, migration_state) and changes nothing on the "+
				"coordinator. Until it completes, the next plan is an update that waits for it, without sending another scale; read its "+
				"progress with the redisstreamcoordinator_migrations data source.", g, p, underWay(seen, am)))
	}
}
