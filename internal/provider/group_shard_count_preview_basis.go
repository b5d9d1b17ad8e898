package provider

import (
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// Terraform re-plans during apply and refuses planned values that differ, so
// the preview is built only from what that re-plan reproduces: groups this
// run deletes or creates are put back or left out, and an assessment that
// depends on what moves by itself (liveness, migration state) stays unknown.

// asPlanned is the prefix as this run's plan sees it, so the re-plan during
// apply describes it the same way: the groups other than g this run creates
// are left out (but a replacement not deleted yet: it exists when the scale
// is sent), and the groups it deleted are put back as its refresh saw them
// (a move of a group after the plan that then deletes it changes nothing the
// apply does).
func asPlanned(reg *planRegistry, rec prefix.Record, g string, refreshed *prefix.Record) prefix.Record {
	var planned []string
	for _, gi := range rec.Groups {
		run := reg.of(rec.Prefix, gi.ConsumerGroup)
		if gi.ConsumerGroup != g && run.create != nil && (!run.deletesOnReplace || run.deleted != nil) {
			planned = append(planned, gi.ConsumerGroup)
		}
	}
	rec = rec.Without(planned...)
	all := rec.Groups
	for _, grp := range reg.withDeleted(prefix.Record{Prefix: rec.Prefix}).Without(g).Groups {
		if rec.Group(grp.ConsumerGroup) != nil {
			continue
		}
		if refreshed != nil {
			if was := refreshed.Group(grp.ConsumerGroup); was != nil {
				grp.ShardCount, grp.ActiveMigration, grp.State = was.ShardCount, was.ActiveMigration, was.State
			}
		}
		all = append(all, grp)
	}
	return prefix.FromListing(all, rec.Prefix)
}
