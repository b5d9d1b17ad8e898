package provider

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// checkUnsetNextToSet fails the plan when one apply creates groups of a
// stream prefix that has no other group, some with initial_shard_count and
// some without. Terraform creates them in any order: one without a count
// created first would get the coordinator's default (12) and split the
// prefix from the one with a count. The plan cannot inherit the sibling's
// planned count either, since Terraform plans each create again during
// apply, when the sibling may not be planned yet. Of two such creates,
// whichever is planned second refuses (registerGroupCreateOfPrefix), so
// the plan fails in either order, before anything is sent.
func checkUnsetNextToSet(p, g string, self plannedGroupCreate, planned map[string]plannedGroupCreate, diags *diag.Diagnostics) {
	var unset, set []string
	counts := map[int64]bool{}
	add := func(name string, c plannedGroupCreate) {
		switch {
		case c.Unset:
			unset = append(unset, fmt.Sprintf("%q", name))
		case c.InitialShardCount != nil:
			set = append(set, fmt.Sprintf("%q (initial_shard_count = %d)", name, *c.InitialShardCount))
			counts[*c.InitialShardCount] = true
		}
	}
	add(g, self)
	for name, c := range planned {
		add(name, c)
	}
	if len(unset) == 0 || len(set) == 0 {
		return
	}
	sort.Strings(unset)
	sort.Strings(set)
	what := "the same initial_shard_count on every one of them"
	if len(counts) == 1 {
		for n := range counts {
			what = fmt.Sprintf("initial_shard_count = %d on %s too", n, strings.Join(unset, ", "))
		}
	}
	diags.AddAttributeError(path.Root("initial_shard_count"), fmt.Sprintf("Groups created together under stream prefix %q need one shard count", p), fmt.Sprintf(
		"This configuration creates group(s) %s under stream prefix %q, which has no other group, and group(s) %s without "+
			"initial_shard_count. Terraform creates them in any order, and a group without a count created first gets the "+
			"coordinator's default (12 shards), which would split the prefix: producers route with one shard count "+
			"per prefix. Nothing was sent to the coordinator.\n\nSet %s.", strings.Join(set, ", "), p, strings.Join(unset, ", "), what))
}
