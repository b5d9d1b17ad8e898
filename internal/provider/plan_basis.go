package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// The coordinator raises metadataVersion on every change of a group's state,
// consumer churn included, so a saved plan's basis is what the reviewer saw:
// the count, the migration under way and the prefix's counts.

type migrationLookup func(ctx context.Context, p, g, id string) (*client.Migration, error)

// basisChanges lists what changed since seen; regressed reports a lower
// metadataVersion. A version that only moved forward is no change.
func basisChanges(ctx context.Context, lookup migrationLookup, seen, now *client.Group) (changes []string, regressed bool, err error) {
	if now.MetadataVersion < seen.MetadataVersion {
		return nil, true, nil
	}
	if now.ShardCount != seen.ShardCount {
		changes = append(changes, fmt.Sprintf("its shard count went from %d to %d", seen.ShardCount, now.ShardCount))
	}
	was, is := prefix.Unfinished(seen), prefix.Unfinished(now)
	switch {
	case was == nil && is != nil:
		changes = append(changes, prefix.Describe(is)+" started")
	case was != nil && is != nil && is.ReshardingID != was.ReshardingID:
		changes = append(changes, fmt.Sprintf("%s, under way at plan time, was followed by %s", prefix.Describe(was), prefix.Describe(is)))
	case was != nil && is == nil:
		m, err := lookup(ctx, seen.StreamPrefix, seen.ConsumerGroup, was.ReshardingID)
		switch {
		case client.IsNotFound(err):
			changes = append(changes, fmt.Sprintf("%s, under way at plan time, is no longer known to the coordinator", prefix.Describe(was)))
		case err != nil:
			return nil, false, err
		case m.State != client.MigrationDeprecated:
			changes = append(changes, fmt.Sprintf("%s, under way at plan time, is now %s", prefix.Describe(was), m.State))
		}
	}
	return changes, false, nil
}

// refuseChangedBasis returns false when the caller must stop.
func refuseChangedBasis(diags *diag.Diagnostics, p, g string, target int32, seen, now *client.Group, changes []string, regressed bool) bool {
	if regressed {
		addBasisRegression(diags, p, g, seen.MetadataVersion, now)
		return false
	}
	if len(changes) == 0 {
		return true
	}
	next := ""
	if am := prefix.Unfinished(now); am != nil && am.State == client.MigrationPreparing && am.ToShardCount != target {
		next = "\n\n" + preparingElsewhereDetail(p, target, *now)
	}
	diags.AddError(fmt.Sprintf("Stale plan: group %s/%s changed since the plan was made", p, g), fmt.Sprintf(
		"The plan for stream prefix %q (to %d shards) was based on group %q having %d shards at metadataVersion %d%s. The coordinator "+
			"now reports %d shards at metadataVersion %d%s: %s. Applying the plan now would make a change nobody reviewed, so nothing "+
			"was sent to the coordinator. (A metadataVersion that only moved forward, with consumers joining or leaving, does not make "+
			"a plan stale.)\n\n"+
			staleBasisNext+"%s",
		p, target, g, seen.ShardCount, seen.MetadataVersion, migrationClause(seen), now.ShardCount, now.MetadataVersion,
		activeMigrationNote(now), strings.Join(changes, "; "), next))
	return false
}

func migrationClause(g *client.Group) string {
	if am := prefix.Unfinished(g); am != nil {
		return ", with " + prefix.Describe(am) + " under way"
	}
	return ", with no migration under way"
}

func addBasisRegression(diags *diag.Diagnostics, p, g string, basisVersion int64, group *client.Group) {
	diags.AddError(
		fmt.Sprintf("Metadata of group %s/%s regressed since the plan", p, g),
		fmt.Sprintf("The plan was based on metadataVersion %d of group %q (stream prefix %q), but the coordinator now reports the lower metadataVersion %d "+
			"(shard count %d): the group's metadata was deleted, corrupted, or restored from an old backup. Nothing was sent to the coordinator.\n",
			basisVersion, g, p, group.MetadataVersion, group.ShardCount)+
			fmt.Sprintf(metadataRunbook, basisVersion)+"\n"+
			"Then run `terraform apply -refresh-only` and `terraform plan` again: the plan fails closed until the regression is acknowledged, "+
			"and its error names the acknowledged_metadata_version value that works (or, when none does, `terraform state rm` and import).",
	)
}

// checkPlanBasis refuses a plan whose basis changed; seen is nil for a new resource.
func (r *groupShardCountResource) checkPlanBasis(ctx context.Context, s *scaler, plan groupShardCountModel, seen, group *client.Group) bool {
	var planned reshardingModel
	haveResharding := !plan.Resharding.IsNull() && !plan.Resharding.IsUnknown()
	if haveResharding {
		s.diags.Append(plan.Resharding.As(ctx, &planned, basetypes.ObjectAsOptions{})...)
	}
	if seen != nil {
		changes, regressed, err := basisChanges(ctx, r.pd.api.GetMigration, seen, group)
		if err != nil {
			addAPIError(s.diags, fmt.Sprintf("Cannot check the plan's basis for group %q under stream prefix %q", s.g, s.p), err,
				"The group no longer reports the migration the plan saw under way; the provider reads it to tell a completed "+
					"migration from a rolled-back one. Nothing was sent to the coordinator; run terraform apply again.")
			return false
		}
		if !refuseChangedBasis(s.diags, s.p, s.g, s.target, seen, group, changes, regressed) {
			return false
		}
	}
	if s.waitOnly || !haveResharding || len(planned.AffectedGroups.Elements()) < 2 {
		// A wait sends no stream-level scale, and a resumed wait's
		// affected_groups are from before the last change, not this plan's basis.
		return true
	}
	// The stream-level scale rescales the siblings: their counts were reviewed.
	want := map[string]int64{}
	s.diags.Append(planned.AffectedGroups.ElementsAs(ctx, &want, false)...)
	reviewed := prefix.Record{Prefix: s.p, CountsOnly: true}
	for name, c := range want {
		reviewed.Groups = append(reviewed.Groups, client.Group{StreamPrefix: s.p, ConsumerGroup: name, ShardCount: int32(c)})
	}
	var now prefix.Record
	if s.basis != nil {
		now = *s.basis
	} else if rec, ok := s.readPrefix(ctx, false); ok {
		now = rec
	} else {
		return false
	}
	// What this apply deletes, replaces or creates is its own change, not drift.
	changed := reviewed.Changes(now, func(g string) bool {
		run := r.pd.plans.of(s.p, g)
		switch {
		case g == s.g && seen != nil:
			return true
		case run.deleted != nil:
			return now.Group(g) == nil || run.created != nil || run.create != nil
		}
		return run.create != nil && reviewed.Group(g) == nil
	})
	if len(changed) == 0 {
		return true
	}
	s.diags.AddError(fmt.Sprintf("Stale plan: the groups of stream prefix %q changed since the plan was made", s.p), fmt.Sprintf(
		"The plan's resharding preview of stream prefix %q listed the groups the stream-level scale rescales, but since then: %s. "+
			"Nothing was sent to the coordinator.\n\n"+staleBasisNext,
		s.p, strings.Join(changed, "; ")))
	return false
}

func activeMigrationNote(g *client.Group) string {
	if am := g.ActiveMigration; am != nil && !am.Finished() {
		return fmt.Sprintf(", with migration %s (%d→%d shards) %s", am.ReshardingID, am.FromShardCount, am.ToShardCount, am.State)
	}
	return ""
}
