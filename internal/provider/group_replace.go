package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// With stream provisioning on, the coordinator refuses the first group of a
// prefix whose keys exist (409 STREAM_PREFIX_ALREADY_EXISTS), so a replacement
// that deletes a prefix's only group would delete it and then fail.

const redisNotConfigured = "NOT_CONFIGURED"

func (r *groupResource) checkPrefixKeptByReplacement(ctx context.Context, p, g string, basis []client.Group, self client.Group,
	selfGoing bool, diags *diag.Diagnostics) bool {
	var gone []client.Group
	for _, grp := range basis {
		if !r.pd.plans.of(p, grp.ConsumerGroup).renamedAway {
			return true // a group that stays keeps the prefix
		}
		gone = append(gone, grp)
	}
	if selfGoing {
		gone = append(gone, self)
	}
	return len(gone) == 0 || r.refuseFirstGroupAfterDelete(ctx, p, g, gone, selfGoing, diags)
}

func (r *groupResource) refuseFirstGroupAfterDelete(ctx context.Context, p, g string, gone []client.Group, self bool, diags *diag.Diagnostics) bool {
	h, err := r.pd.api.Health(ctx)
	if err == nil && h.Redis == redisNotConfigured {
		return true
	}
	seen := fmt.Sprintf("its /health could not be read (%v)", err)
	if err == nil {
		seen = fmt.Sprintf("its /health reports redis %q", h.Redis)
	}
	names := describeSiblings(countsOf(gone))
	what := fmt.Sprintf("renames %s of stream prefix %q to %q", names, p, g)
	todo := fmt.Sprintf("Create the new group while the old one still holds the prefix: add a second redisstreamcoordinator_group for %q "+
		"next to the old one and apply, move consumers and producers to it, then remove the old resource and apply again.", g)
	if self {
		what = fmt.Sprintf("replaces %s, the only group of stream prefix %q", names, p)
		todo = "Keep the group instead of replacing it (remove -replace, or undo the change that forces the replacement). To " +
			"start it again from scratch anyway, destroy it on its own first (terraform destroy -target), check what its Redis streams " +
			"still hold and remove them yourself, then apply."
	}
	diags.AddError(fmt.Sprintf("Replacing the only group of stream prefix %q would delete it and then fail to create %q", p, g), fmt.Sprintf(
		"This plan %s with deletion_policy = \"DELETE\": Terraform deletes the group's metadata first, and the create of %q is then "+
			"the first group of the prefix. The delete keeps the prefix's Redis streams (%s…), and a coordinator with stream provisioning on "+
			"(COORDINATOR_STREAMS_PROVISIONING_ENABLED) refuses the first group of a prefix whose stream keys exist with 409 "+
			"STREAM_PREFIX_ALREADY_EXISTS: the apply would delete the group and leave the prefix without one. The provider cannot rule "+
			"provisioning out: %s. Nothing was sent to the coordinator.\n\n%s",
		what, g, shellQuote(p+":0"), seen, todo))
	return false
}
