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
// (basisChanges). A new resource has no refresh and no basis: Terraform
// re-plans it during apply from a fresh read, so its preview is known after
// apply and the apply scales from what it finds. Private bookkeeping (an
// unfinished wait, a migration under way that the plan waits for) is
// checked the same way: such a plan never sends a scale (scaler.waitOnly).

// migrationLookup reads one migration of a group.
type migrationLookup func(ctx context.Context, p, g, id string) (*client.Migration, error)

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

// addBasisRegression is the regression a basis check finds, at apply or in
// a `plan -refresh=false`: the coordinator reports a lower metadataVersion
// than the plan (or the state) was based on.
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

// checkPlanBasis refuses, before any mutation, a plan whose basis changed on
// the coordinator since it was made (plan_basis.go): seen is the group as the
// plan's refresh recorded it (nil for a new resource, which has no basis:
// preview). A metadataVersion that only moved forward is no change.
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
		// A plan that only waits sends no stream-level scale, so the
		// siblings' counts are not part of what it changes; and a resumed
		// wait carries the resharding record of the last change, whose
		// affected_groups are the counts from before it, not this plan's
		// basis. The wait refuses a group of the prefix that is not where
		// waiting brings it (refuseWaitOnly).
		return true
	}
	// The stream-level scale rescales the siblings too: their counts are
	// part of what was reviewed.
	want := map[string]int64{}
	s.diags.Append(planned.AffectedGroups.ElementsAs(ctx, &want, false)...)
	reviewed := prefix.Record{Prefix: s.p, CountsOnly: true}
	for name, c := range want {
		reviewed.Groups = append(reviewed.Groups, client.Group{StreamPrefix: s.p, ConsumerGroup: name, ShardCount: int32(c)})
	}
	now := prefix.Record{Prefix: s.p}
	if s.basis != nil {
		now = *s.basis
	} else if groups, ok := s.prefixGroups(ctx, false); ok {
		now.Groups = groups
	} else {
		return false
	}
	// What this apply deleted (gone, or created again or about to be: a
	// replacement) and the groups it creates are its own, not changes
	// behind the plan's back; the group itself was compared above.
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
