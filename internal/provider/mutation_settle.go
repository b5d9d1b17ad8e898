package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// The delete and the rollback whose answer was lost (client.IsAmbiguous),
// shared by the group resource's destroy, the shard count's
// rollback_on_revert and the actions, are settled by the one rule of
// prefix.Settle, as the create and the scales are. The request and its
// read-back run on a grace context (grace.go), so an interrupt in flight
// still ends with the outcome known; the client sends nothing new once the
// operation has ended (client.WithOperation).

// deleteGroupSettled sends a delete of group g under stream prefix p. After
// a lost answer it reads the group back: gone means the delete was applied;
// still there means it was not, and it is sent again with the same request
// id. A delete is idempotent for the rule (a second send of an applied one
// answers 404 GROUP_NOT_FOUND, "already gone"), so a failed read-back sends
// it again too. settledBy is the lost answer that a read-back showed applied
// (nil when the coordinator's own answer came through); err is the outcome
// otherwise, a 404 GROUP_NOT_FOUND (already gone) included.
func deleteGroupSettled(ctx context.Context, timing settleTiming, api *client.Client, p, g string, force bool, m client.Mutation) (settledBy, err error) {
	mctx, done := timing.graceContext(ctx, "delete-group "+m.RequestID)
	defer done()
	_, j, err := prefix.Settle(mctx, prefix.Mutation[struct{}]{
		What: fmt.Sprintf("delete of group %q under stream prefix %q", g, p), RequestID: m.RequestID, Idempotent: true,
		Send: func(ctx context.Context) (struct{}, error) {
			_, err := api.DeleteGroup(ctx, p, g, force, m)
			return struct{}{}, err
		},
		ReadBack: func(ctx context.Context) (struct{}, bool, error) {
			_, err := api.GetGroup(ctx, p, g)
			if client.IsNotFound(err) {
				return struct{}{}, true, nil
			}
			return struct{}{}, false, err
		},
	})
	var un *prefix.UnsettledError
	if errors.As(err, &un) && un.Reason == prefix.NotSentAgain {
		read := "the group read back was still there, so the delete had not happened"
		if un.ReadBack != nil {
			read = fmt.Sprintf("reading the group back failed (%v), so whether the delete had happened is unknown", un.ReadBack)
		}
		return nil, fmt.Errorf("the delete (request id %s) was sent and its answer was lost; %s, and it was not sent again: %w. "+
			"The group was not deleted", m.RequestID, read, un.NotSent)
	}
	return j.SettledBy, err
}

// rollbackSettled rolls back migration id of group g under stream prefix p.
// After a lost answer it reads the migration back: ROLLED_BACK is the
// rollback's result; otherwise (or when the read-back failed: the contract
// makes a rollback idempotent) the rollback is sent again with the same
// request id, and the coordinator's answer to that (422
// ROLLBACK_NOT_ALLOWED for a migration no longer ACTIVE) is the outcome.
// settledBy is the lost answer that a read-back showed applied.
func rollbackSettled(ctx context.Context, timing settleTiming, api *client.Client, p, g, id string, m client.Mutation) (mig *client.Migration, settledBy, err error) {
	mctx, done := timing.graceContext(ctx, "rollback-migration "+m.RequestID)
	defer done()
	mig, j, err := prefix.Settle(mctx, prefix.Mutation[*client.Migration]{
		What:      fmt.Sprintf("rollback of migration %s of group %q under stream prefix %q", id, g, p),
		RequestID: m.RequestID, Idempotent: true,
		Send: func(ctx context.Context) (*client.Migration, error) {
			return api.RollbackMigration(ctx, p, g, id, m)
		},
		ReadBack: func(ctx context.Context) (*client.Migration, bool, error) {
			read, err := api.GetMigration(ctx, p, g, id)
			if err != nil {
				return nil, false, err
			}
			return read, read.State == client.MigrationRolledBack, nil
		},
	})
	var un *prefix.UnsettledError
	if errors.As(err, &un) && un.Reason == prefix.NotSentAgain {
		read := "the migration read back was not ROLLED_BACK"
		if un.ReadBack != nil {
			read = fmt.Sprintf("reading the migration back failed (%v)", un.ReadBack)
		}
		return nil, nil, fmt.Errorf("the rollback (request id %s) was sent and its answer was lost; %s, and the rollback was not "+
			"sent again: %w", m.RequestID, read, un.NotSent)
	}
	return mig, j.SettledBy, err
}
