package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// Delete receives the private data planned for the replacement's create and
// refuses before the DELETE when the siblings that plan saw have moved.

func recordCreateBasis(ctx context.Context, private privateSetter, p string, basis []client.Group) diag.Diagnostics {
	seen := &prefixSeen{Prefix: p, Groups: map[string]prefixSeenGroup{}}
	for _, grp := range basis {
		seen.Groups[grp.ConsumerGroup] = prefixSeenGroup{Count: grp.ShardCount}
	}
	return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.PrefixSeen = seen })
}

func clearCreateBasis(ctx context.Context, private privateSetter) diag.Diagnostics {
	rec, _, diags := decodePrivateRecord(ctx, private)
	if rec.PrefixSeen == nil {
		return diags
	}
	return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.PrefixSeen = nil })
}

func (r *groupResource) refuseStaleReplacement(ctx context.Context, rec privateRecord, p, g string, diags *diag.Diagnostics) bool {
	if rec.PrefixSeen == nil || rec.PrefixSeen.Prefix == "" {
		return true
	}
	sp := rec.PrefixSeen.Prefix
	seen, _ := rec.prefix(sp)
	seen.CountsOnly = true // the create's plan depends on the counts alone
	all, err := r.pd.api.Groups(ctx)
	if err != nil {
		addAPIError(diags, fmt.Sprintf("Cannot re-check the plan of the replacement of group %q under stream prefix %q", g, p), err,
			"Before deleting a group it replaces, the provider re-reads the groups the replacement's plan was based on. Nothing was "+
				"sent to the coordinator: the group was not deleted. Run terraform apply again once the coordinator answers.")
		return false
	}
	basis, _ := planBasisOfPrefix(&r.pd.plans, all, sp, "")
	// A -replace's group is not its own sibling, but its count is the basis
	// when the replacement takes it; gone, it is what the delete does. A
	// rename's old name is a sibling.
	now := prefix.FromListing(slices.Collect(maps.Values(basis)), sp)
	ours := r.pd.ours(sp, seen, now)
	self := func(n string) bool {
		return ours(n) || sp == p && n == g && (seen.Group(g) == nil || now.Group(g) == nil)
	}
	return refuseStale(diags, fmt.Sprintf("Stale plan: the replacement of group %s/%s was planned against groups that changed", p, g), fmt.Sprintf(
		"This plan deletes group %q of stream prefix %q and creates its replacement in stream prefix %q with the shard count the "+
			"prefix's other groups had at plan time, and they changed since", g, p, sp), seen.Changes(now, self), fmt.Sprintf(
		"Deleting the group now would leave the replacement to a create that no longer matches what was reviewed, and the group "+
			"deleted. Nothing was sent to the coordinator: group %q was not deleted and is unchanged.", g))
}
