package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// A 404 for a part of a group that state recorded means the group was
// re-created or its store restored: the refresh records what the coordinator
// has now and a metadata regression, so the guard fails the next plan closed.

// lostMigrationRegression is recorded even when the version shows no
// regression: rejoining consumers may already have lifted it.
func lostMigrationRegression(highest int64, group *client.Group, id string, ack types.Int64) *metadataRegression {
	v := group.MetadataVersion
	return &metadataRegression{Seen: max(highest, v), Reported: v, Latest: v, StaleAck: int64Ptr(ack), LostMigration: id}
}

func lostMigrationDetail(resourceType, p, g string, reg *metadataRegression) string {
	return fmt.Sprintf("%s %q: this resource recorded migration %s of group %q of stream prefix %q (at metadataVersion %d), and the "+
		"coordinator no longer knows it (404): the group was deleted and created again, or its store restored from an older copy "+
		"(CONTRACT §4), although metadataVersion (%d) is not below what this resource had seen: consumers rejoining lift it again and "+
		"hide the regression. Clients may hold newer routing than the coordinator.\n", resourceType, g, reg.LostMigration, g, p, reg.Seen, reg.latest())
}

// migrationForgotten keeps the id in migration_ids and drops any wait for it,
// since that wait can never finish.
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
