package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// createSettled settles a lost create by reading the group back. A group that
// is as this create would make it (proveOwnCreate) is adopted once still there
// after the settle bound; one this create cannot prove its own is not adopted;
// no group means the create is sent again with the same request id. A create is
// not idempotent: a failed read-back sends nothing more.
func (r *groupResource) createSettled(ctx context.Context, p, g string, count *int32, m client.Mutation, diags *diag.Diagnostics) (*client.Group, error) {
	api := r.pd.api
	group, j, err := prefix.Settle(ctx, prefix.Mutation[*client.Group]{
		What: fmt.Sprintf("create of group %q under stream prefix %q", g, p), RequestID: m.RequestID,
		Lost:            isAmbiguousCreate,
		LandedMeanwhile: func(err error) bool { return client.IsConflict(err, client.CodeGroupAlreadyExists) },
		Send: func(ctx context.Context) (*client.Group, error) {
			group, err := api.CreateGroup(ctx, p, g, count, m)
			if !client.IsNotSent(err) {
				r.pd.noteMutation(p)
			}
			return group, err
		},
		ReadBack: func(ctx context.Context) (*client.Group, bool, error) {
			group, err := api.GetGroup(ctx, p, g)
			if client.IsNotFound(err) {
				return nil, false, nil
			}
			if err != nil {
				return nil, false, err
			}
			if err := r.proveOwnCreate(ctx, p, g, count, group, m.RequestID); err != nil {
				return nil, false, err
			}
			settled, err := r.confirmSettled(ctx, p, g, group)
			if err != nil {
				return nil, false, err
			}
			if settled == nil {
				return nil, false, prefix.Decided(fmt.Errorf("%w (request id %s): the group appeared (metadataVersion %d) and was "+
					"deleted again by the coordinator within %s", errCreateRolledBack, m.RequestID, group.MetadataVersion, r.pd.timing.settleBound()))
			}
			return settled, true, nil
		},
	})
	var un *prefix.UnsettledError
	var notSent *client.NotSentError
	switch {
	case err == nil && j.SettledBy != nil:
		how := "The group now exists"
		if client.IsConflict(j.SettledBy, client.CodeGroupAlreadyExists) { // a re-send's answer (LandedMeanwhile)
			how = "The re-sent create (same request id) answered 409 GROUP_ALREADY_EXISTS: the first create had landed meanwhile. The group exists"
		}
		lost, still := "was lost", fmt.Sprintf("was still there after the coordinator's %s critical-section bound", r.pd.timing.settleBound())
		if ended := client.OperationEnded(ctx); ended != nil {
			lost = fmt.Sprintf("was still outstanding when the operation ended (%v) and its share of the grace period ran out", ended)
			still = "was read back once, without waiting for the critical-section bound (the interrupt leaves no time for it; if " +
				"the coordinator deletes it again, the next refresh finds it gone and the next plan creates it)"
		}
		diags.AddWarning("Adopted a group whose create response was lost",
			fmt.Sprintf("The answer to the create of group %q under stream prefix %q (request id %s) %s. %s with %d shards "+
				"(the count this create sent) and no migration history, as this create would have made it (metadataVersion %d: "+
				"consumers that joined since raise it), and %s, so it was adopted into state as this apply's own group. If another "+
				"actor created the same group at the same moment: %s",
				g, p, m.RequestID, lost, how, group.ShardCount, group.MetadataVersion, still, auditLookupHint(p, g, m.RequestID)))
	case errors.As(err, &un) && un.Reason == prefix.NotSentAgain && errors.As(un.NotSent, &notSent):
		return nil, fmt.Errorf("the operation ended (%w) while the create (request id %s) was in flight, and the group does not exist: "+
			"the create did not happen, and it is not sent again after an interrupt. Nothing was created; run terraform apply again",
			notSent.Err, m.RequestID)
	case errors.As(err, &un) && un.ReadBack != nil:
		return nil, &lostCreateError{err: un.ReadBack, advice: fmt.Sprintf("The create (request id %s) got no usable answer, and "+
			"reading the group back to settle it failed, so whether the coordinator created the group is unknown. %s\n\n%s",
			m.RequestID, auditLookupHint(p, g, m.RequestID), lostCreateNextPlan(p, g))}
	case errors.As(err, &un):
		return nil, &lostCreateError{err: un.Lost, advice: fmt.Sprintf("The create (request id %s) was sent %d times, and none of "+
			"its answers settled it: after each, reading the group back found no group, so the create had not happened, and it was "+
			"not sent again (%d re-sends is the limit). Check the coordinator's health and the proxy in front of it. %s",
			m.RequestID, un.Sends, un.Sends-1, lostCreateNextPlan(p, g))}
	case j.Sends > 1 && client.IsConflict(err, client.CodeStreamPrefixAlreadyExists):
		return nil, &lostCreateError{err: err, advice: fmt.Sprintf("This create's first attempt (request id %s) got no usable "+
			"answer, and the same create sent again found Redis keys for stream prefix %q. Most likely the first attempt itself "+
			"failed while provisioning the streams (503 REDIS_STREAM_PROVISIONING_FAILED): the coordinator deleted the group's "+
			"metadata again but kept the keys it had already made, %s. Choosing another stream_prefix is not the fix. Check the "+
			"coordinator's log and audit for request id %s and the Redis failure, then clear the keys. %s",
			m.RequestID, p, leftoverKeys(p, count), m.RequestID, clearKeysHint(p, count))}
	}
	return group, err
}

// lostCreateError: the create's answer was lost and reading the group back
// did not settle it; advice says what is known and what to do next.
type lostCreateError struct {
	err    error // the last answer, or the read-back's failure; nil when a group found was not adopted
	advice string
}

func (e *lostCreateError) Error() string {
	if e.err == nil {
		return e.advice
	}
	return e.err.Error()
}

func (e *lostCreateError) Unwrap() error { return e.err }

// A lost create's group is proven ours by the count it sent and by having no
// migration history. Not by metadataVersion: consumers joining raise it. A
// refusal is the outcome found (prefix.Decided); a failed read is not.
func (r *groupResource) proveOwnCreate(ctx context.Context, p, g string, count *int32, group *client.Group, requestID string) error {
	if count != nil && group.ShardCount != *count {
		return prefix.Decided(fmt.Errorf("%w: after the outcome of this create was lost (request id %s), the group exists with %d shards "+
			"(metadataVersion %d), but this create sent initialShardCount %d", errCreatedByOther, requestID, group.ShardCount, group.MetadataVersion, *count))
	}
	if am := group.ActiveMigration; am != nil {
		return prefix.Decided(fmt.Errorf("%w: after the outcome of this create was lost (request id %s), the group exists with migration %s (%d→%d shards, %s): "+
			"it was scaled since it was created", errCreatedByOther, requestID, am.ReshardingID, am.FromShardCount, am.ToShardCount, am.State))
	}
	history, err := r.pd.api.Migrations(ctx, p, g)
	if err != nil {
		return err
	}
	if n := len(history.Migrations); n > 0 {
		m := history.Migrations[n-1]
		return prefix.Decided(fmt.Errorf("%w: after the outcome of this create was lost (request id %s), the group exists with %d shards and a "+
			"migration history (%d migration(s), the last %s, %d→%d shards, %s): it was scaled since it was created",
			errCreatedByOther, requestID, group.ShardCount, n, m.ReshardingID, m.FromShardCount, m.ToShardCount, m.State))
	}
	if count == nil {
		return prefix.Decided(&lostCreateError{advice: fmt.Sprintf(
			"The answer to the create of group %q under stream prefix %q (request id %s) was lost, and the group now exists with %d "+
				"shards, metadataVersion %d and no migration history. This create sent no initial shard count (no initial_shard_count, "+
				"and no other group of the prefix to take one from), so the coordinator chose its own configured default (12 unless "+
				"COORDINATOR_DEFAULTS_INITIAL_SHARD_COUNT says otherwise), and nothing the provider can read proves that the group "+
				"is this create's rather than another actor's: it was not adopted.\n\n%s If it is this create's, import it; if not, "+
				"it belongs to someone else.\n\n%s To avoid this after a lost answer, set initial_shard_count: the count a create "+
				"sent is part of what proves a group is its own.", g, p, requestID, group.ShardCount, group.MetadataVersion,
			auditLookupHint(p, g, requestID), lostCreateNextPlan(p, g))})
	}
	return nil
}

func auditLookupHint(p, g, requestID string) string {
	return fmt.Sprintf("The coordinator's audit log tells: look for the CREATE_GROUP event of stream prefix %q, consumer group %q with "+
		"requestId %q (outcome SUCCESS means this create made the group). The audit sink is the log line of logger "+
		"`redis-stream-coordinator.audit` (COORDINATOR_AUDIT_SINK=log, the default) or the Redis list `<keyPrefix>:{%s:%s}:admin:audit` "+
		"(COORDINATOR_AUDIT_SINK=redis; keyPrefix defaults to redis-stream:coord).", p, g, requestID, p, g)
}

func lostCreateNextPlan(p, g string) string {
	return fmt.Sprintf("Nothing was recorded in Terraform state. The next plan lists the coordinator's groups: if the group exists, it "+
		"fails with \"Group already exists\" until you import it (terraform import redisstreamcoordinator_group.<name> %s, or an "+
		"import block with id = %q); if it does not, it plans the create again.", groupID(p, g), groupID(p, g))
}

// confirmSettled re-reads after the settle bound, since the coordinator may
// still delete the group. After an interrupt it adopts what the read-back saw:
// a group left out of state would fail the next apply with "Group already exists".
func (r *groupResource) confirmSettled(ctx context.Context, p, g string, seen *client.Group) (*client.Group, error) {
	if client.OperationEnded(ctx) != nil {
		return seen, nil //nolint:nilerr // interrupted: adopt what the one read-back saw (above)
	}
	if err := client.Sleep(ctx, r.pd.timing.settleBound()); err != nil {
		return nil, err
	}
	group, err := r.pd.api.GetGroup(ctx, p, g)
	if client.IsNotFound(err) || err == nil && group.MetadataVersion < seen.MetadataVersion {
		return nil, nil // deleted again (and maybe re-created since): not this create's group
	}
	return group, err
}
