package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

const planCheckUnderWay = "a migration to this count is already under way (read from the coordinator at plan time): applying waits for it and sends no scale"

// underWayMigration returns the group's migration under way to its own count, or nil.
func underWayMigration(g *client.Group) *client.Migration {
	if g == nil {
		return nil
	}
	am := g.ActiveMigration
	if am.Finished() || am.State == client.MigrationPreparing || am.ToShardCount != g.ShardCount {
		return nil
	}
	return am
}

// recordSiblingsSeen records the prefix as the refresh read it: Terraform's
// re-plan during apply has no refresh and must compute the same values
// however the prefix moved since.
func (r *groupShardCountResource) recordSiblingsSeen(ctx context.Context, private privateSetter, group *client.Group) diag.Diagnostics {
	all, err := r.pd.groupsForPlan(ctx)
	if err != nil {
		// The refresh stands, but must not let a split prefix plan "No changes".
		diags := updatePrivateRecord(ctx, private, func(r *privateRecord) { r.PrefixSeen = nil })
		addAPIWarning(&diags, fmt.Sprintf("Cannot check the other groups of stream prefix %q", group.StreamPrefix), err,
			"The refresh read the group but not the groups listing (GET /coord/v1/monitoring/groups, which the READ role allows), so this "+
				"plan cannot show whether every group of the prefix is at shard_count (a split prefix is drift). Fix the cause above and "+
				"plan again; a change of shard_count still lists the prefix and fails if it cannot.")
		return diags
	}
	seen := &prefixSeen{Groups: map[string]prefixSeenGroup{}}
	for _, gi := range prefix.FromListing(all, group.StreamPrefix).Groups {
		if gi.ConsumerGroup == group.ConsumerGroup {
			gi = *group
		}
		seen.Groups[gi.ConsumerGroup] = prefixSeenGroup{Count: gi.ShardCount, Empty: !hasLiveConsumer(gi), Migration: prefix.Unfinished(&gi)}
	}
	return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.PrefixSeen = seen })
}

func recordUnderWay(ctx context.Context, state *groupShardCountModel, group *client.Group, diags *diag.Diagnostics) {
	am := underWayMigration(group)
	if am == nil {
		return
	}
	ids, d := migrationIDs(ctx, state.MigrationIDs)
	diags.Append(d...)
	if ids[group.ConsumerGroup] != am.ReshardingID {
		v, d := types.MapValueFrom(ctx, types.StringType, map[string]string{group.ConsumerGroup: am.ReshardingID})
		diags.Append(d...)
		state.MigrationIDs = v
		state.PreviousShardCount = types.Int64Value(int64(am.FromShardCount))
	}
	state.MigrationState = types.StringValue(string(am.State))
}

func underWaySince(am *client.Migration) string {
	if am.CreatedAt.IsZero() {
		return "an unknown time (the coordinator sent no createdAt)"
	}
	return am.CreatedAt.UTC().Format(time.RFC3339)
}

// underWay says, from the group record alone, since when its migration am is
// under way and what it still waits for.
func underWay(g *client.Group, am *client.Migration) string {
	waits := "the consumers to release the shards they hand over"
	switch {
	case am.State == client.MigrationActive && !hasLiveConsumer(*g):
		waits = "the coordinator's next loop tick (a scale-in with no live consumer skips the revoke)"
	case am.State == client.MigrationActive:
		waits = "the group's live consumers to converge to the new assignment"
	case am.ToShardCount < am.FromShardCount:
		waits = fmt.Sprintf("the removed shards %s to be released by the consumers and drained (no pending entries, no lag in Redis)",
			shardRange(g.StreamPrefix, am.ToShardCount, am.FromShardCount))
	}
	return fmt.Sprintf("migration %s (%d→%d shards) is already under way since %s, now %s: it waits for %s",
		am.ReshardingID, am.FromShardCount, am.ToShardCount, underWaySince(am), am.State, waits)
}
