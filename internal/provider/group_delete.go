package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// lostDeleteResends bounds how often a delete whose answer was lost, and
// which the read-back shows did not happen, is sent again.
const lostDeleteResends = 2

// deleteGroup sends the delete and settles a lost answer
// (client.IsAmbiguous) by reading the group back: gone means deleted; still
// there means the delete did not happen, and it is sent again with the same
// request id (unless the operation was interrupted). The request and its
// read-back run on a grace context, so an interrupt in flight still ends
// with the outcome known.
func (r *groupResource) deleteGroup(ctx context.Context, p, g string, force bool, m client.Mutation, diags *diag.Diagnostics) error {
	api := r.pd.api
	if ctx.Err() != nil {
		return fmt.Errorf("the delete was not sent: the operation ended (%w); the group was not deleted", ctx.Err())
	}
	mctx, done := graceContext(ctx, "delete-group "+m.RequestID)
	defer done()
	_, err := api.DeleteGroup(mctx, p, g, force, m)
	for resends := 0; client.IsAmbiguous(err); resends++ {
		tflog.Warn(ctx, "group delete outcome unknown; reading the group back", map[string]any{
			"stream_prefix": p, "consumer_group": g, "request_id": m.RequestID, "error": err.Error(),
		})
		_, rerr := api.GetGroup(mctx, p, g)
		if client.IsNotFound(rerr) {
			diags.AddWarning("The answer to the group's delete was lost; the group is gone", fmt.Sprintf(
				"The delete of group %q under stream prefix %q (request id %s) got no answer from the coordinator itself: %s. Reading the "+
					"group back found it gone (404 GROUP_NOT_FOUND), so the delete was applied.", g, p, m.RequestID, lostAnswerCause(err)))
			return nil
		}
		if rerr != nil || resends >= lostDeleteResends || ctx.Err() != nil {
			return err
		}
		_, err = api.DeleteGroup(mctx, p, g, force, m)
	}
	return err
}
