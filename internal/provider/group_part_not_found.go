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
// refresh records what the coordinator has now and says what was lost, and
// records a metadata regression (lostMigrationRegression) even when the
// metadataVersion is not below the high-water mark: consumers rejoining may
// already have lifted it back above. The metadata guard (metadata_guard.go)
// fails the next plan closed with its runbook, and its documented ways out
// (acknowledged_metadata_version, or state rm and import) work because the
// refresh does. The one exception is this configuration's own replacement
// of the group (group_shard_count_recreated.go), whose apply clears
// migration_state, so no later refresh looks the old group's migration up.
//
// Read of the shard count is the only Read that reads a part of a group
// (the group resource reads the group alone). Waits during apply read
// migrations too, but only ones the same apply started or resumed.

// lostMigrationRegression is the record of a recorded migration the
// coordinator no longer knows, when the version alone shows no regression:
// highest is the high-water mark before this refresh, group what the
// coordinator reports now, id the migration, ack the
// acknowledged_metadata_version in state.
func lostMigrationRegression(highest int64, group *client.Group, id string, ack types.Int64) *metadataRegression {
	v := group.MetadataVersion
	return &metadataRegression{Seen: max(highest, v), Reported: v, Latest: v, StaleAck: int64Ptr(ack), LostMigration: id}
}

// lostMigrationDetail is the plan error's first paragraph for such a record.
func lostMigrationDetail(resourceType, p, g string, reg *metadataRegression) string {
	return fmt.Sprintf("%s %q: this resource recorded migration %s of group %q of stream prefix %q (at metadataVersion %d), and the "+
		"coordinator no longer knows it (404): the group was deleted and created again, or its store restored from an older copy "+
		"(CONTRACT §4), although metadataVersion (%d) is not below what this resource had seen: consumers rejoining lift it again and "+
		"hide the regression. Clients may hold newer routing than the coordinator.\n", resourceType, g, reg.LostMigration, g, p, reg.Seen, reg.latest())
}

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
		apiErrorDetail(err, "The next plan fails closed with the metadata runbook (a delete-and-recreate or a restore, whatever "+
			"the metadataVersion shows): follow it, then set acknowledged_metadata_version to the value the plan's error names, or "+
			"terraform state rm this resource and import it again.")))
}
