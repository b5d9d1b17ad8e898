package provider

import (
	"context"
	"fmt"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// What proves that a group found after a lost create answer is this create's
// (issue 23 §2, issue 24 §8). Not its metadataVersion: the coordinator raises
// it on every change of the group's stored state (CONTRACT §4), and consumers
// that start before their group exists join within seconds of the create, so
// the group this very create made may report 2 or more. The evidence is:
//
//   - the shard count this create sent (a create that sent none proves
//     nothing by its count: the coordinator's default is configurable);
//   - no migration history: the group was never scaled since it was created
//     (a new group has none, CONTRACT §4.2).
//
// The group response carries no creation time; the audit record of the
// create's request id is the only proof of whose create it was, and the
// diagnostics say how to look it up.

// unprovenCreateError: the create sent no shard count, so the group found
// after its lost answer cannot be told from another actor's.
type unprovenCreateError struct {
	requestID string
	detail    string
}

func (e *unprovenCreateError) Error() string { return e.detail }

// lostCreateReadError: the create's answer was lost and reading the group
// back failed, so its outcome is unknown.
type lostCreateReadError struct {
	requestID string
	err       error
}

func (e *lostCreateReadError) Error() string { return e.err.Error() }
func (e *lostCreateReadError) Unwrap() error { return e.err }

// proveOwnCreate returns nil when group is as this create (which sent count)
// made it, else an error wrapping errCreatedByOther, an unprovenCreateError,
// or a lostCreateReadError.
func (r *groupResource) proveOwnCreate(ctx context.Context, p, g string, count *int32, group *client.Group, requestID string) error {
	if count != nil && group.ShardCount != *count {
		return fmt.Errorf("%w: after the outcome of this create was lost (request id %s), the group exists with %d shards "+
			"(metadataVersion %d), but this create sent initialShardCount %d", errCreatedByOther, requestID, group.ShardCount, group.MetadataVersion, *count)
	}
	if am := group.ActiveMigration; am != nil {
		return fmt.Errorf("%w: after the outcome of this create was lost (request id %s), the group exists with migration %s (%d→%d shards, %s): "+
			"it was scaled since it was created", errCreatedByOther, requestID, am.ReshardingID, am.FromShardCount, am.ToShardCount, am.State)
	}
	history, err := r.pd.api.Migrations(ctx, p, g)
	if err != nil {
		return &lostCreateReadError{requestID: requestID, err: err}
	}
	if n := len(history.Migrations); n > 0 {
		m := history.Migrations[n-1]
		return fmt.Errorf("%w: after the outcome of this create was lost (request id %s), the group exists with %d shards and a "+
			"migration history (%d migration(s), the last %s, %d→%d shards, %s): it was scaled since it was created",
			errCreatedByOther, requestID, group.ShardCount, n, m.ReshardingID, m.FromShardCount, m.ToShardCount, m.State)
	}
	if count == nil {
		return &unprovenCreateError{requestID: requestID, detail: fmt.Sprintf("The answer to the create of group %q under stream prefix %q "+
			"(request id %s) was lost, and the group now exists with %d shards, metadataVersion %d and no migration history. This create sent "+
			"no initial shard count (no initial_shard_count, and no other group of the prefix to take one from), so the coordinator chose "+
			"its own configured default (12 unless COORDINATOR_DEFAULTS_INITIAL_SHARD_COUNT says otherwise), and nothing the provider can "+
			"read proves that the group is this create's rather than another actor's: it was not adopted", g, p, requestID,
			group.ShardCount, group.MetadataVersion)}
	}
	return nil
}

// auditLookupHint says how to find out whether the create with requestID
// was applied.
func auditLookupHint(p, g, requestID string) string {
	return fmt.Sprintf("The coordinator's audit log tells: look for the CREATE_GROUP event of stream prefix %q, consumer group %q with "+
		"requestId %q (outcome SUCCESS means this create made the group). The audit sink is the log line of logger "+
		"`redis-stream-coordinator.audit` (COORDINATOR_AUDIT_SINK=log, the default) or the Redis list `<keyPrefix>:{%s:%s}:admin:audit` "+
		"(COORDINATOR_AUDIT_SINK=redis; keyPrefix defaults to redis-stream:coord).", p, g, requestID, p, g)
}

// lostCreateNextPlan says truthfully what the next plan does after a create
// whose outcome was not settled: the group is not in state, and a plan that
// creates it lists the coordinator's groups first.
func lostCreateNextPlan(p, g string) string {
	return fmt.Sprintf("Nothing was recorded in Terraform state. The next plan lists the coordinator's groups: if the group exists, it "+
		"fails with \"Group already exists\" until you import it (terraform import redisstreamcoordinator_group.<name> %s, or an "+
		"import block with id = %q); if it does not, it plans the create again.", groupID(p, g), groupID(p, g))
}
