package provider

import (
	"fmt"
	"strings"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// What the shard count's preview may and may not be built from (issue 23
// §1, plan_basis.go).
//
// Terraform plans the resource again during apply and refuses planned
// values that differ from the plan's ("Provider produced inconsistent final
// plan"), so every known value of resharding must come out the same from
// that re-plan. A new resource's re-plan has no prior state or private data
// and reads the prefix afresh, so its whole preview is known after apply
// (preview). For an update, two kinds of input do not come out the same:
//
//   - the groups this same apply deletes or creates before the re-plan
//     (withDeletedInRun, withoutPlannedCreates): they are put back and left
//     out, so the re-plan describes the prefix as the plan saw it;
//   - what moves by itself: whether a group has a live consumer (EMPTY or
//     not) and the state of a migration under way (ACTIVE, DRAINING,
//     completed). Consumer churn or a migration completing by itself never
//     makes a plan fail (only a change of the basis does), so
//     completes_by_itself and blocked_by are planned only from records that
//     do not move between plan and re-plan: this resource's own group as its
//     refresh recorded it (group_seen). When they depend on a sibling of
//     the prefix, they are known after apply, and the plan's warning says
//     what they are as read at plan time (movesByItself).

// withDeletedInRun puts back the groups of the prefix this provider deleted
// in this run, as the plan's refresh saw them: the registry's count and
// version, with the migration under way and liveness of this resource's
// refresh record of the prefix (refreshed, nil without one), which the
// assessment reads, so that Terraform's re-plan during apply describes the
// prefix as the plan did.
func (s prefixSnapshot) withDeletedInRun(reg *planRegistry, refreshed *prefix.Record) prefixSnapshot {
	listed := prefix.Record{Prefix: s.p, Groups: s.groups}
	all := append([]client.Group(nil), s.groups...)
	for _, grp := range reg.withDeleted(prefix.Record{Prefix: s.p}).Without(s.g).Groups {
		if listed.Group(grp.ConsumerGroup) != nil {
			continue
		}
		if refreshed != nil {
			if was := refreshed.Group(grp.ConsumerGroup); was != nil {
				grp.ActiveMigration, grp.State = was.ActiveMigration, was.State
			}
		}
		all = append(all, grp)
	}
	return newPrefixSnapshot(all, s.p, s.g, s.target)
}

// movesByItself lists the groups whose liveness or migration under way the
// assessment (completes_by_itself, blocked_by) depends on, and which may
// change by themselves before the apply: another group with a migration
// under way that moves by itself (ACTIVE or DRAINING; a PREPARING one never
// does, CONTRACT §4.6) or a scale-out the change resumes (PREPARING to the
// target), or, with none, one the scale takes out (its liveness decides
// whether the scale-out completes: prefix.Decision.NoConsumer); and the
// resource's own group while its scale-out is ACTIVE (its consumers may
// leave). Otherwise its own group is as its refresh recorded it.
func (s prefixSnapshot) movesByItself() []string {
	var names []string
	for _, gi := range s.groups {
		am := gi.ActiveMigration
		own := gi.ConsumerGroup == s.g
		resumed := !am.Finished() && am.ToShardCount == s.target && am.ToShardCount > am.FromShardCount
		switch {
		case own && !am.Finished() && am.State == client.MigrationActive && am.ToShardCount > am.FromShardCount,
			!own && !am.Finished() && (am.State != client.MigrationPreparing || resumed),
			!own && am.Finished() && gi.ShardCount < s.target:
			names = append(names, fmt.Sprintf("%q", gi.ConsumerGroup))
		}
	}
	return names
}

// movesByItselfDetail is the plan warning's account of an assessment known
// only after apply.
func movesByItselfDetail(names []string, completes bool, blockedBy string) string {
	now := "nothing stands in the way"
	if blockedBy != "" {
		now = "the change " + blockedBy
	}
	by := "completes by itself"
	if !completes {
		by = "does not complete by itself"
	}
	return fmt.Sprintf("\n\nresharding.completes_by_itself and resharding.blocked_by are known after apply: they depend on whether "+
		"group(s) %s have a live consumer and on their migrations under way, which change by themselves between this plan and "+
		"the apply (consumers join and leave, migrations complete) without making the plan stale. As read at plan time, %s, and "+
		"it %s.", strings.Join(names, ", "), now, by)
}

// siblingsSinceRefresh lists how the other groups of the prefix differ from
// the prefix as the refresh recorded it (prefix_seen), by the model's one
// rule (prefix.Record.Changes): a group that appeared or disappeared, a
// count that moved, a migration that started (a PREPARING one included,
// which keeps the old count but is resumed by the next scale), ended
// elsewhere or was replaced; one that advanced or completed at its target
// is no change. The groups this run created, deleted or replaces are left
// out (withoutPlannedCreates and withDeletedInRun describe those as the
// plan saw them). Terraform's re-plan during apply refuses such a plan as
// stale before anything is sent, instead of computing a preview that
// differs from the saved plan's; a plan made with -refresh=false after the
// prefix moved is refused the same way, and one with a refresh records the
// prefix afresh.
func (s prefixSnapshot) siblingsSinceRefresh(refreshed *prefix.Record, reg *planRegistry) []string {
	if refreshed == nil {
		return nil // no record: the plan lists for itself
	}
	ours := func(name string) bool {
		return name == s.g || reg.of(s.p, name).own()
	}
	return refreshed.Changes(prefix.Record{Prefix: s.p, Groups: s.groups}, ours)
}
