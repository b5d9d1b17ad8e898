package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// A plan without a refresh compares with the last refresh's record again.
const staleBasisNext = "Run terraform plan again with a refresh (without -refresh=false: a plan without one compares with the " +
	"same old record and is refused again), or record the coordinator's groups first with terraform apply -refresh-only; review " +
	"the new resharding preview, and apply that plan."

// refuseStale is the one refusal of a saved plan whose basis moved (summary
// "Stale plan: …"): what the plan was based on, what changed since, what was
// (not) sent, and staleBasisNext. It adds nothing when nothing changed.
func refuseStale(diags *diag.Diagnostics, summary, basis string, changes []string, sent string) bool {
	if len(changes) == 0 {
		return true
	}
	diags.AddError(summary, fmt.Sprintf("%s: %s. %s\n\n%s", basis, strings.Join(changes, "; "), sent, staleBasisNext))
	return false
}

func refusalText(p string, target int32, rollbackOnRevert bool, r *prefix.Refusal) (summary, detail string) {
	gi := r.Groups[0]
	switch r.Kind {
	case prefix.PreparingElsewhere:
		return fmt.Sprintf("Cannot scale stream prefix %q to %d shards: a PREPARING migration blocks it", p, target), preparingElsewhereDetail(p, target, gi)
	case prefix.StalledElsewhere:
		var migs, groups, calls []string
		for _, gi := range r.Groups {
			migs = append(migs, describeMigration(gi))
			groups = append(groups, fmt.Sprintf("%q", gi.ConsumerGroup))
			calls = append(calls, "POST "+client.RollbackPath(p, gi.ConsumerGroup, gi.ActiveMigration.ReshardingID))
		}
		return fmt.Sprintf("Cannot scale stream prefix %q to %d shards while another resharding is in progress", p, target), fmt.Sprintf(
			"A scale of stream prefix %q to %d shards must wait for %s, a scale-out whose group has no live consumer: it stays ACTIVE "+
				"until a consumer joins, so waiting could only time out. Start a consumer of group %s, or roll the migration back (%s), "+
				"then plan again.", p, target, strings.Join(migs, " and "), strings.Join(groups, " and "), strings.Join(calls, "; "))
	case prefix.BlockedElsewhere:
		detail := blockingMigrationsDetail(p, target, r.Groups)
		if calls := rollbackCalls(p, r.Groups); calls != "" {
			detail += "\n\nWait until they finish (a scale-out finishes once the group's consumers converge; a stalled consumer holds it " +
				"until its lease expires), or roll them back:\n" + calls
		}
		return fmt.Sprintf("Stream prefix %q has a resharding in progress to another shard count", p), detail + "\n\nScaling the other " +
			"groups of the prefix before these would leave it at two shard counts. Run terraform apply again once they are finished."
	}
	return fmt.Sprintf("Stream prefix %q is being resharded away from %d shards", p, target), revertRefusedDetail(p, target, rollbackOnRevert, r.Groups)
}

func preparingElsewhereDetail(p string, target int32, gi client.Group) string {
	am := gi.ActiveMigration
	return fmt.Sprintf("Group %q of stream prefix %q has migration %s (%d→%d shards) in state PREPARING: its shard provisioning "+
		"failed, and a PREPARING migration never moves by itself. The coordinator refuses every other scale of the prefix "+
		"(409 ACTIVE_MIGRATION_EXISTS), even a scale back to %d shards, and cannot roll it back (422 ROLLBACK_NOT_ALLOWED). "+
		"The only way out is its own target: set shard_count = %d (once Redis is healthy), apply, and change the count "+
		"afterwards. The desired count here is %d.", gi.ConsumerGroup, p, am.ReshardingID, am.FromShardCount, am.ToShardCount,
		am.FromShardCount, am.ToShardCount, target)
}

func revertRefusedDetail(p string, target int32, rollbackOnRevert bool, active []client.Group) string {
	anyActive := false
	var cannot []string // why each migration cannot be rolled back to target
	for _, gi := range active {
		am := gi.ActiveMigration
		anyActive = anyActive || am.State == client.MigrationActive
		switch {
		case am.State != client.MigrationActive:
			cannot = append(cannot, fmt.Sprintf("%s is %s, and the coordinator rolls back a migration only while it is ACTIVE", describeMigration(gi), am.State))
		case am.FromShardCount != target:
			cannot = append(cannot, fmt.Sprintf("rolling back %s would take group %q to %d shards, not %d", describeMigration(gi), gi.ConsumerGroup, am.FromShardCount, target))
		}
	}
	// Waiting is described, never recommended: once DRAINING a migration can no
	// longer be rolled back.
	wait := "Waiting for them to finish may not end: a migration finishes only once every live consumer has taken its new " +
		"assignment (a scale-out with no live consumer never does) and a scale-in's removed shards are drained in Redis, for every " +
		"consumer group on them"
	var why string
	switch {
	case len(cannot) == 0 && !rollbackOnRevert:
		why = fmt.Sprintf("Set rollback_on_revert = true to roll them back through Terraform, or roll them back yourself with the calls "+
			"below. %s; once DRAINING it can no longer be rolled back; and after it finishes, the next plan scales back to %d "+
			"shards as a new change, moving the keys a second time.", wait, target)
	case anyActive:
		why = fmt.Sprintf("They cannot all be rolled back: %s. %s. Once they have, apply the new count. Those still ACTIVE can be "+
			"rolled back with:", strings.Join(cannot, "; "), wait)
	default:
		why = fmt.Sprintf("They cannot be rolled back: %s. %s. Once they have, apply the new count.", strings.Join(cannot, "; "), wait)
	}
	return strings.TrimRight(fmt.Sprintf("Stream prefix %q is being resharded away from %d shards. ", p, target)+
		blockingMigrationsDetail(p, target, active)+"\n\n"+why+"\n"+rollbackCalls(p, active), "\n")
}
