package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// The read-back of a delete or a rollback whose answer was lost
// (client.IsAmbiguous), shared by the group resource's destroy, the shard
// count's rollback_on_revert and the actions: one rule for every mutation.
// The request and its read-back run on a grace context (grace.go), so an
// interrupt in flight still ends with the outcome known; the client sends
// nothing new once the operation has ended (client.WithOperation).

// lostDeleteResends bounds how often a delete whose answer was lost, and
// which the read-back shows did not happen, is sent again.
const lostDeleteResends = 2

// deleteGroupSettled sends a delete of group g under stream prefix p. After
// a lost answer it reads the group back: gone means the delete was applied;
// still there means it was not, and it is sent again with the same request
// id. settledBy is the lost answer that a read-back showed applied (nil when
// the coordinator's own answer came through); err is the outcome otherwise,
// a 404 GROUP_NOT_FOUND (already gone) included.
func deleteGroupSettled(ctx context.Context, api *client.Client, p, g string, force bool, m client.Mutation) (settledBy, err error) {
	mctx, done := graceContext(ctx, "delete-group "+m.RequestID)
	defer done()
	_, err = api.DeleteGroup(mctx, p, g, force, m)
	for resends := 0; client.IsAmbiguous(err); resends++ {
		tflog.Warn(ctx, "group delete outcome unknown; reading the group back", map[string]any{
			"stream_prefix": p, "consumer_group": g, "request_id": m.RequestID, "error": err.Error(),
		})
		_, rerr := api.GetGroup(mctx, p, g)
		if client.IsNotFound(rerr) {
			return err, nil
		}
		if rerr != nil || resends >= lostDeleteResends {
			return nil, err
		}
		_, err = api.DeleteGroup(mctx, p, g, force, m)
		if client.IsNotSent(err) {
			return nil, fmt.Errorf("the delete (request id %s) was sent and its answer was lost; the group read back was still there, "+
				"so the delete had not happened, and it was not sent again: %w. The group was not deleted", m.RequestID, err)
		}
	}
	return nil, err
}

// rollbackSettled rolls back migration id of group g under stream prefix p.
// After a lost answer it reads the migration back: ROLLED_BACK is the
// rollback's result; otherwise the rollback, which the contract makes
// idempotent, is sent once more with the same request id, and the
// coordinator's answer to that (422 ROLLBACK_NOT_ALLOWED for a migration no
// longer ACTIVE) is the outcome. settledBy is the lost answer that a
// read-back showed applied.
func rollbackSettled(ctx context.Context, api *client.Client, p, g, id string, m client.Mutation) (mig *client.Migration, settledBy, err error) {
	mctx, done := graceContext(ctx, "rollback-migration "+m.RequestID)
	defer done()
	mig, err = api.RollbackMigration(mctx, p, g, id, m)
	if !client.IsAmbiguous(err) {
		return mig, nil, err
	}
	tflog.Warn(ctx, "rollback outcome unknown; reading the migration back", map[string]any{
		"stream_prefix": p, "consumer_group": g, "resharding_id": id, "request_id": m.RequestID, "error": err.Error(),
	})
	if read, rerr := api.GetMigration(mctx, p, g, id); rerr == nil && read.State == client.MigrationRolledBack {
		return read, err, nil
	}
	mig, err = api.RollbackMigration(mctx, p, g, id, m)
	if client.IsNotSent(err) {
		return nil, nil, fmt.Errorf("the rollback (request id %s) was sent and its answer was lost; the migration read back was not "+
			"ROLLED_BACK, and the rollback was not sent again: %w", m.RequestID, err)
	}
	return mig, nil, err
}
