package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// deleteGroup reports a lost answer the read-back showed applied as a warning.
func (r *groupResource) deleteGroup(ctx context.Context, p, g string, force bool, m client.Mutation, diags *diag.Diagnostics) error {
	settledBy, err := deleteGroupSettled(ctx, r.pd.timing, r.pd.api, p, g, force, m)
	if settledBy != nil {
		diags.AddWarning("The answer to the group's delete was lost; the group is gone", fmt.Sprintf(
			"The delete of group %q under stream prefix %q (request id %s) got no answer from the coordinator itself: %s. Reading the "+
				"group back found it gone (404 GROUP_NOT_FOUND), so the delete was applied.", g, p, m.RequestID, lostAnswerCause(settledBy)))
	}
	return err
}
