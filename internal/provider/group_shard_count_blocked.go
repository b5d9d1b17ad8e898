package provider

import (
	"fmt"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// refuseBlockedTakeOver stops a take-over of a stream prefix where a
// migration heads to another count, before anything is sent. Scaling the
// groups before it one by one (the per-group endpoint) and only then
// stopping at it would leave the prefix at two shard counts, which producers,
// routing with one count per prefix, cannot follow. It reports whether it
// refused.
func (s *scaler) refuseBlockedTakeOver(siblings []client.Group) bool {
	var blocking []client.Group
	for _, gi := range siblings {
		if am := gi.ActiveMigration; am != nil && !am.Finished() && am.ToShardCount != s.target {
			blocking = append(blocking, gi)
		}
	}
	if len(blocking) == 0 {
		return false
	}
	detail := blockingMigrationsDetail(s.p, s.target, blocking)
	for _, gi := range blocking {
		if gi.ActiveMigration.State == client.MigrationPreparing {
			detail += "\n\n" + preparingElsewhereDetail(s.p, s.target, gi)
		}
	}
	if calls := rollbackCalls(s.p, blocking); calls != "" {
		detail += "\n\nWait until they finish (a scale-out finishes once the group's consumers converge; a stalled consumer holds it " +
			"until its lease expires), or roll them back:\n" + calls
	}
	s.diags.AddError(fmt.Sprintf("Stream prefix %q has a resharding in progress to another shard count", s.p), detail+
		"\n\n"+s.nothingSent()+" Scaling the other groups of the prefix before these would leave it at two "+
		"shard counts. Run terraform apply again once they are finished.")
	return true
}
