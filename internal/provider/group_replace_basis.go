package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// The delete half of a replacement is applied as saved: Delete receives
// the private data planned for the replacement's create, whose plan
// recorded the siblings it saw (privateRecord.PrefixSeen). Delete compares
// them with the prefix as the create's apply-time plan will see it
// (planBasisOfPrefix) and refuses before the DELETE when they moved. Every
// plan starts without it (a refused Delete leaves it in state) and Create
// clears it, so no other delete checks it.

// recordCreateBasis is planCreate's part: the siblings the plan saw.
func recordCreateBasis(ctx context.Context, private privateSetter, p string, basis []client.Group) diag.Diagnostics {
	seen := &prefixSeen{Prefix: p, Groups: map[string]prefixSeenGroup{}}
	for _, grp := range basis {
		seen.Groups[grp.ConsumerGroup] = prefixSeenGroup{Count: grp.ShardCount}
	}
	return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.PrefixSeen = seen })
}

// clearCreateBasis drops a create basis the private state holds.
func clearCreateBasis(ctx context.Context, private privateSetter) diag.Diagnostics {
	rec, _, diags := decodePrivateRecord(ctx, private)
	if rec.PrefixSeen == nil {
		return diags
	}
	return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.PrefixSeen = nil })
}

// refuseStaleReplacement reports false, with the error, when the siblings
// the replacement of group g of prefix p was planned against changed since:
// the delete is then not sent.
func (r *groupResource) refuseStaleReplacement(ctx context.Context, private privateGetter, p, g string, diags *diag.Diagnostics) bool {
	rec, d := readPrivateRecord(ctx, private)
	diags.Append(d...)
	if d.HasError() || rec.PrefixSeen == nil || rec.PrefixSeen.Prefix == "" {
		return !d.HasError()
	}
	sp := rec.PrefixSeen.Prefix
	seen, _, _ := readPrefixSeen(ctx, private, sp)
	seen.CountsOnly = true // the create's plan depends on the counts alone
	all, err := r.pd.api.Groups(ctx)
	if err != nil {
		addAPIError(diags, fmt.Sprintf("Cannot re-check the plan of the replacement of group %q under stream prefix %q", g, p), err,
			"Before deleting a group it replaces, the provider re-reads the groups the replacement's plan was based on. Nothing was "+
				"sent to the coordinator: the group was not deleted. Run terraform apply again once the coordinator answers.")
		return false
	}
	basis, _ := planBasisOfPrefix(&r.pd.plans, &r.pd.run, all, sp, "")
	var groups []client.Group
	for _, grp := range basis {
		groups = append(groups, grp)
	}
	// The group a -replace re-creates is not its own sibling; the old name
	// of a rename is, and is compared.
	self := func(n string) bool { return sp == p && n == g && seen.Group(g) == nil }
	changes := seen.Changes(prefix.FromListing(groups, sp), self)
	if len(changes) == 0 {
		return true
	}
	diags.AddError(fmt.Sprintf("Stale plan: the replacement of group %s/%s was planned against groups that changed", p, g), fmt.Sprintf(
		"This plan deletes group %q of stream prefix %q and creates its replacement in stream prefix %q with the shard count the "+
			"prefix's other groups had at plan time, and they changed since: %s. Deleting the group now would leave the replacement "+
			"to a create that no longer matches what was reviewed, and the group deleted. Nothing was sent to the coordinator: group "+
			"%q was not deleted and is unchanged.\n\n"+staleBasisNext,
		g, p, sp, strings.Join(changes, "; "), g))
	return false
}
