package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// A refresh survives what the metadata guard exists for. When Read has
// found the group but the coordinator answers 404 for a part of it that the
// state recorded (a migration: MIGRATION_NOT_FOUND, or GROUP_NOT_FOUND when
// the group went in between), the coordinator no longer knows what this
// resource saw: the group was deleted and created again, or its store was
// restored from an older copy (CONTRACT §4). That is no refresh failure. The
// refresh records what the coordinator has now and says what was lost; where
// the metadataVersion went backwards as well, the metadata guard
// (metadata_guard.go) fails the next plan closed with its runbook, and its
// documented ways out (acknowledged_metadata_version, or state rm and
// import) work because the refresh does.
//
// Read of the shard count is the only Read that reads a part of a group
// (the group resource reads the group alone). Waits during apply read
// migrations too, but only ones the same apply started or resumed.

// migrationForgotten is followMigration's answer to a 404 for migration id,
// recorded in state: migration_state is cleared (the coordinator has no such
// migration to be in a state), migration_ids keeps the id for the record, and
// an unfinished wait for it is dropped, since it can never finish.
func migrationForgotten(ctx context.Context, state *groupShardCountModel, id string, group *client.Group, err error, private privateSetter, diags *diag.Diagnostics) {
	p, g := group.StreamPrefix, group.ConsumerGroup
	recorded := state.MigrationState.ValueString()
	state.MigrationState = types.StringNull()
	diags.Append(setPendingWait(ctx, private, false)...)
	diags.AddWarning(fmt.Sprintf("Migration %s of group %s is unknown to the coordinator", id, groupID(p, g)), fmt.Sprintf(
		"This resource recorded migration %s of group %q under stream prefix %q (last seen %s), and the coordinator no longer "+
			"knows it. The group was deleted and created again, or its metadata restored from an older copy, since this resource "+
			"last saw it: the group now has %d shards at metadataVersion %d%s. migration_state is cleared; migration_ids keeps the "+
			"id for the record, and an unfinished wait for it is dropped.\n\n%s",
		id, g, p, recorded, group.ShardCount, group.MetadataVersion, activeMigrationNote(group),
		apiErrorDetail(err, "If the metadataVersion went backwards, the plan fails with the metadata runbook: follow it, then "+
			"set acknowledged_metadata_version to the version the coordinator now reports, or terraform state rm this resource and "+
			"import it again. Otherwise the next apply plans from the group as it is now.")))
}
