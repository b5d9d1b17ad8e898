package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// The plan basis of redisstreamcoordinator_group_shard_count (issue 23 §1).
//
// The coordinator raises a group's metadataVersion on every change of its
// stored state (CONTRACT §4): a consumer joining, leaving, expiring or being
// fenced, a migration draining or completing, stale members pruned. So the
// version alone cannot be a saved plan's basis: in a group with live
// consumers it moves between plan and apply most of the time, although
// nothing a reviewer saw changed. The basis is what the reviewer saw and what
// the mutation depends on:
//
//   - the group's shard count;
//   - its migration under way (id, from, to), or that none was: one that
//     appeared, or was replaced by another, is a change; one that completed
//     (DEPRECATED) is not, one rolled back (or no longer known) is;
//   - the groups of the prefix with their counts (resharding.affected_groups);
//   - the regression guard: a metadataVersion lower than the one the plan
//     saw (resharding.basis_metadata_version) is a regression, never a
//     stale plan.
//
// A version that only moved forward with all of that unchanged is not stale.
// The group as the plan saw it is the record the plan's refresh kept in
// private state (group_seen); an update's plan, Terraform's re-plan during
// apply and the apply itself compare the coordinator's group with it
// (basisChanges). A new resource has no refresh: Terraform re-plans it during
// apply from a fresh read and refuses values that differ from the saved
// plan's, so its planned values leave out what churn moves (the version is
// known only after apply), and the apply compares the planned
// from_shard_count and affected_groups. Private bookkeeping (an unfinished
// wait, a migration under way that the plan waits for) is checked the same
// way: such a plan never sends a scale (scaler.waitOnly).

// migrationLookup reads one migration of a group.
type migrationLookup func(ctx context.Context, p, g, id string) (*client.Migration, error)

// unfinishedMigration is the group's active migration while it is under way.
func unfinishedMigration(g *client.Group) *client.Migration {
	if g == nil || g.ActiveMigration.Finished() {
		return nil
	}
	return g.ActiveMigration
}

func describeMigrationOf(am *client.Migration) string {
	return fmt.Sprintf("migration %s (%d→%d shards, %s)", am.ReshardingID, am.FromShardCount, am.ToShardCount, am.State)
}

// basisChanges lists what changed in the group between seen (what the plan
// was based on) and now. regressed reports a lower metadataVersion (the
// metadata guard's to report). A nil list and false mean the plan stands,
// however far metadataVersion moved forward. err is a failed migration read.
func basisChanges(ctx context.Context, lookup migrationLookup, seen, now *client.Group) (changes []string, regressed bool, err error) {
	if now.MetadataVersion < seen.MetadataVersion {
		return nil, true, nil
	}
	if now.ShardCount != seen.ShardCount {
		changes = append(changes, fmt.Sprintf("its shard count went from %d to %d", seen.ShardCount, now.ShardCount))
	}
	was, is := unfinishedMigration(seen), unfinishedMigration(now)
	switch {
	case was == nil && is != nil:
		changes = append(changes, describeMigrationOf(is)+" started")
	case was != nil && is != nil && is.ReshardingID != was.ReshardingID:
		changes = append(changes, fmt.Sprintf("%s, under way at plan time, was followed by %s", describeMigrationOf(was), describeMigrationOf(is)))
	case was != nil && is == nil:
		m, err := lookup(ctx, seen.StreamPrefix, seen.ConsumerGroup, was.ReshardingID)
		switch {
		case client.IsNotFound(err):
			changes = append(changes, fmt.Sprintf("%s, under way at plan time, is no longer known to the coordinator", describeMigrationOf(was)))
		case err != nil:
			return nil, false, err
		case m.State != client.MigrationDeprecated:
			changes = append(changes, fmt.Sprintf("%s, under way at plan time, is now %s", describeMigrationOf(was), m.State))
		}
	}
	return changes, false, nil
}

// refuseChangedBasis reports a plan whose basis changed: a regression with
// the runbook, otherwise a stale plan listing what changed. It returns false
// when the caller must stop.
func refuseChangedBasis(diags *diag.Diagnostics, p, g string, target int32, seen, now *client.Group, changes []string, regressed bool) bool {
	if regressed {
		addBasisRegression(diags, p, g, seen.MetadataVersion, now)
		return false
	}
	if len(changes) == 0 {
		return true
	}
	next := ""
	if am := unfinishedMigration(now); am != nil && am.State == client.MigrationPreparing && am.ToShardCount != target {
		next = "\n\n" + preparingElsewhereDetail(p, target, *now)
	}
	diags.AddError(fmt.Sprintf("Stale plan: group %s/%s changed since the plan was made", p, g), fmt.Sprintf(
		"The plan for stream prefix %q (to %d shards) was based on group %q having %d shards at metadataVersion %d%s. The coordinator "+
			"now reports %d shards at metadataVersion %d%s: %s. Applying the plan now would make a change nobody reviewed, so nothing "+
			"was sent to the coordinator. (A metadataVersion that only moved forward, with consumers joining or leaving, does not make "+
			"a plan stale.)\n\n"+
			"Run terraform plan again, review the new resharding preview, and apply that plan.%s",
		p, target, g, seen.ShardCount, seen.MetadataVersion, migrationClause(seen), now.ShardCount, now.MetadataVersion,
		activeMigrationNote(now), strings.Join(changes, "; "), next))
	return false
}

func migrationClause(g *client.Group) string {
	if am := unfinishedMigration(g); am != nil {
		return ", with " + describeMigrationOf(am) + " under way"
	}
	return ", with no migration under way"
}

// addBasisRegression is the apply-time regression: the coordinator reports a
// lower metadataVersion than the plan was based on.
func addBasisRegression(diags *diag.Diagnostics, p, g string, basisVersion int64, group *client.Group) {
	diags.AddError(
		fmt.Sprintf("Metadata of group %s/%s regressed since the plan", p, g),
		fmt.Sprintf("The plan was based on metadataVersion %d of group %q (stream prefix %q), but the coordinator now reports the lower metadataVersion %d "+
			"(shard count %d): the group's metadata was deleted, corrupted, or restored from an old backup. Nothing was changed by this apply.\n",
			basisVersion, g, p, group.MetadataVersion, group.ShardCount)+
			fmt.Sprintf(metadataRunbook, basisVersion)+"\n"+
			"Then run `terraform apply -refresh-only` and `terraform plan` again; the plan will fail closed until the regression is acknowledged:\n"+
			fmt.Sprintf(metadataWayOut, group.MetadataVersion),
	)
}

// plannedFrom is the from_shard_count a plan computes for group g heading to
// target: its count, or where a migration already heading there started.
func plannedFrom(g *client.Group, target int32) int32 {
	if am := unfinishedMigration(g); am != nil && am.ToShardCount == target {
		return am.FromShardCount
	}
	return g.ShardCount
}
