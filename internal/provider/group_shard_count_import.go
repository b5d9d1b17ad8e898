package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// An import plans nothing but the import, whatever the group is in the
// middle of (issue 24 §7): a group found with a migration under way to its
// count (ACTIVE or DRAINING) imports with the migration recorded
// (migration_ids, migration_state), and the import's plan says it is under
// way instead of planning an update that waits for it; the apply of an
// import must not block on someone else's resharding. From the next plan on,
// the rule of group_shard_count_under_way.go holds: a plan never calls an
// unfinished resharding done.
//
// That holds for an import whose plan is the import alone. An import block
// whose plan changes an argument too (requested_by, reason, wait_for,
// timeouts, rollback_on_revert, acknowledged_metadata_version differing
// from the imported defaults) is an update, and Terraform plans it again
// during apply in another provider instance, which is no import's plan (see
// below): so the import's plan is planned like that one
// (importPlansNothing), and its apply waits for the migration under way or
// repairs a split prefix, as the next plan after a plain import would. Two
// plans that disagree would fail the apply with "Provider produced
// inconsistent final plan".
//
// The import's refresh is the one Read whose prior state has no shard_count
// (ImportState sets only the identity and the defaults); it marks the
// private state, the plan that follows sees the mark, and every later
// refresh clears it. The mark names the provider instance that wrote it
// (providerData.configuration): the import's refresh and its plan run in one
// instance, while an import that plans nothing has its refreshed private
// state saved as it is (Terraform writes no planned private state for a
// no-op), so a later `plan -refresh=false`, in another instance, finds the
// mark and must not take itself for the import's plan.

// The mark is privateRecord.ImportRead.

// setImportRead marks (importing) or clears the mark in a Read's private
// state.
func setImportRead(ctx context.Context, private privateSetter, pd *providerData, importing bool) diag.Diagnostics {
	mark := ""
	if importing && pd != nil {
		mark = pd.configuration
	}
	return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.ImportRead = mark })
}

// readImportRead says whether this provider instance's own import refresh
// wrote the prior private state.
func readImportRead(ctx context.Context, private privateGetter, pd *providerData) (bool, diag.Diagnostics) {
	if private == nil || pd == nil {
		return false, nil
	}
	rec, diags := readPrivateRecord(ctx, private)
	return rec.ImportRead != "" && rec.ImportRead == pd.configuration, diags
}

// clearImportRead is the top of every plan of an existing shard count: the
// mark is read from the prior private state (readImportRead) and never
// carried into the planned one, whichever branch the plan takes (an import
// whose plan also changes the count included), so no later plan, one with
// -refresh=false included, mistakes itself for the import's.
func clearImportRead(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() || resp.Private == nil {
		return
	}
	resp.Diagnostics.Append(updatePrivateRecord(ctx, resp.Private, func(r *privateRecord) { r.ImportRead = "" })...)
}

// warnUnderWayAtImport is the import plan's part: the migration under way
// is reported, not waited on (clearImportRead has already cleared the mark
// from the planned private state).
func warnUnderWayAtImport(plan groupShardCountModel, seen *client.Group, resp *resource.ModifyPlanResponse) {
	if seen == nil || seen.ActiveMigration.Finished() {
		return
	}
	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	if am := seen.ActiveMigration; am.State == client.MigrationPreparing {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Importing the shard count of stream prefix %q while a migration is PREPARING", p), fmt.Sprintf(
			"Group %q under stream prefix %q has migration %s (%d→%d shards), PREPARING since %s: provisioning its shards failed, and "+
				"the group still has %d shards. A PREPARING migration never moves by itself and blocks every other scale of the prefix "+
				"(409 ACTIVE_MIGRATION_EXISTS), even one back to %d. The import changes nothing; to resume it, set shard_count = %d and "+
				"apply (a scale to its own target resumes the provisioning).", g, p, am.ReshardingID, am.FromShardCount, am.ToShardCount,
			underWaySince(am), seen.ShardCount, am.FromShardCount, am.ToShardCount))
		return
	}
	am := underWayMigration(seen)
	if am == nil || int64(am.ToShardCount) != plan.ShardCount.ValueInt64() {
		return
	}
	if prefix.Stalled(seen) {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Importing the shard count of stream prefix %q while a scale-out waits for a consumer", p), fmt.Sprintf(
			"Group %q under stream prefix %q has migration %s (%d→%d shards), ACTIVE since %s, and no live consumer: a scale-out stays "+
				"ACTIVE until a consumer of the group joins and converges, and blocks every other scale of the prefix until then. The "+
				"import records it (migration_ids, migration_state) and changes nothing; start the group's consumers to let it complete, "+
				"or roll it back with the redisstreamcoordinator_rollback_migration action.", g, p, am.ReshardingID, am.FromShardCount,
			am.ToShardCount, underWaySince(am)))
		return
	}
	resp.Diagnostics.AddWarning(fmt.Sprintf("Importing the shard count of stream prefix %q while a resharding is under way", p), fmt.Sprintf(
		"Group %q under stream prefix %q has migration %s (%d→%d shards) under way since %s, now %s: it waits for %s. The import "+
			"records it (migration_ids, migration_state) and changes nothing on the coordinator. Until it completes, the next plan "+
			"is an update that waits for it, without sending another scale; read its progress with the "+
			"redisstreamcoordinator_migrations data source.", g, p, am.ReshardingID, am.FromShardCount, am.ToShardCount,
		underWaySince(am), am.State, underWayWaitsFor(p, seen, am)))
}
