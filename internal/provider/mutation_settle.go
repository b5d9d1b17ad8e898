package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// settleIdempotent settles a mutation the contract makes idempotent (kind
// names it in the log): after a lost answer it is sent again with the same
// request id unless the read-back shows it applied. notSent[0], or notSent[1]
// with the read's error, says why it was not sent again, and notSent[2] what
// that leaves; settledBy is the lost answer a read-back showed applied.
func settleIdempotent[T any](ctx context.Context, timing settleTiming, kind, noun string, mut prefix.Mutation[T], notSent [3]string) (v T, settledBy, err error) {
	mctx, done := timing.graceContext(ctx, kind+" "+mut.RequestID)
	defer done()
	mut.Idempotent = true
	v, j, err := prefix.Settle(mctx, mut)
	var un *prefix.UnsettledError
	if errors.As(err, &un) && un.Reason == prefix.NotSentAgain {
		read := notSent[0]
		if un.ReadBack != nil {
			read = fmt.Sprintf(notSent[1], un.ReadBack)
		}
		var zero T
		return zero, nil, fmt.Errorf("the %s (request id %s) was sent and its answer was lost; %s, and it was not sent again: %w%s",
			noun, mut.RequestID, read, un.NotSent, notSent[2])
	}
	return v, j.SettledBy, err
}

// deleteGroupSettled: a second send of an applied delete answers 404.
func deleteGroupSettled(ctx context.Context, timing settleTiming, api *client.Client, p, g string, force bool, m client.Mutation) (settledBy, err error) {
	_, settledBy, err = settleIdempotent(ctx, timing, "delete-group", "delete", prefix.Mutation[struct{}]{
		What: fmt.Sprintf("delete of group %q under stream prefix %q", g, p), RequestID: m.RequestID,
		Send: func(ctx context.Context) (struct{}, error) {
			_, err := api.DeleteGroup(ctx, p, g, force, m)
			return struct{}{}, err
		},
		ReadBack: func(ctx context.Context) (struct{}, bool, error) {
			if _, err := api.GetGroup(ctx, p, g); !client.IsNotFound(err) {
				return struct{}{}, false, err
			}
			return struct{}{}, true, nil
		},
	}, [3]string{"the group read back was still there, so the delete had not happened",
		"reading the group back failed (%v), so whether the delete had happened is unknown", ". The group was not deleted"})
	return settledBy, err
}

// rollbackSettled: unless the read-back shows ROLLED_BACK, a rollback is sent again.
func rollbackSettled(ctx context.Context, timing settleTiming, api *client.Client, p, g, id string, m client.Mutation) (mig *client.Migration, settledBy, err error) {
	return settleIdempotent(ctx, timing, "rollback-migration", "rollback", prefix.Mutation[*client.Migration]{
		What: fmt.Sprintf("rollback of migration %s of group %q under stream prefix %q", id, g, p), RequestID: m.RequestID,
		Send: func(ctx context.Context) (*client.Migration, error) {
			return api.RollbackMigration(ctx, p, g, id, m)
		},
		ReadBack: func(ctx context.Context) (*client.Migration, bool, error) {
			read, err := api.GetMigration(ctx, p, g, id)
			return read, err == nil && read.State == client.MigrationRolledBack, err
		},
	}, [3]string{"the migration read back was not ROLLED_BACK", "reading the migration back failed (%v)", ""})
}
