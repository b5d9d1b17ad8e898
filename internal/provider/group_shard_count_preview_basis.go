package provider

import (
	"fmt"
	"strings"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// Terraform re-plans during apply and refuses planned values that differ, so
// the preview is built only from what that re-plan reproduces: groups this
// run deletes or creates are put back or left out, and an assessment that
// depends on what moves by itself (liveness, migration state) stays unknown.

// withDeletedInRun puts back the groups this run deleted, as the plan's refresh
// saw them, so the re-plan during apply describes the prefix as the plan did.
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

// movesByItself lists the groups the assessment depends on that may change
// before the apply: consumers join and leave, ACTIVE and DRAINING migrations
// advance (a PREPARING one never moves by itself).
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

// siblingsSinceRefresh lists how the other groups differ from the refresh's
// record: the re-plan during apply refuses such a plan as stale instead of
// computing a preview that differs from the saved plan's.
func (s prefixSnapshot) siblingsSinceRefresh(refreshed *prefix.Record, reg *planRegistry) []string {
	if refreshed == nil {
		return nil
	}
	ours := func(name string) bool {
		return name == s.g || reg.of(s.p, name).own()
	}
	return refreshed.Changes(prefix.Record{Prefix: s.p, Groups: s.groups}, ours)
}
