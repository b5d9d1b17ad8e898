package provider

import (
	"fmt"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// Terraform re-plans during apply and refuses planned values that differ, so
// the preview is built only from what that re-plan reproduces: groups this
// run deletes or creates are put back or left out, and an assessment that
// depends on what moves by itself (liveness, migration state) stays unknown.

// withDeletedInRun puts back the groups this run deleted, as the plan's refresh
// saw them, so the re-plan during apply describes the prefix as the plan did.
func withDeletedInRun(reg *planRegistry, rec prefix.Record, g string, refreshed *prefix.Record) prefix.Record {
	all := append([]client.Group(nil), rec.Groups...)
	for _, grp := range reg.withDeleted(prefix.Record{Prefix: rec.Prefix}).Without(g).Groups {
		if rec.Group(grp.ConsumerGroup) != nil {
			continue
		}
		if refreshed != nil {
			if was := refreshed.Group(grp.ConsumerGroup); was != nil {
				grp.ActiveMigration, grp.State = was.ActiveMigration, was.State
			}
		}
		all = append(all, grp)
	}
	return prefix.FromListing(all, rec.Prefix)
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
		"it %s.", quoted(names), now, by)
}
