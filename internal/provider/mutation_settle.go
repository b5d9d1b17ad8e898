package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// deleteGroupSettled: a delete is idempotent (a second send of an applied one
// answers 404), so after a lost answer it is sent again with the same request
// id unless the read-back shows the group gone. settledBy is the lost answer a
// read-back showed applied.
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

// rollbackSettled: the contract makes a rollback idempotent, so unless the
// read-back shows ROLLED_BACK it is sent again with the same request id.
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
