package provider

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// Terraform creates independent resources in any order, so a group without
// a count created first would get the coordinator's default and split the
// prefix. The plan cannot see depends_on, but a dependency is planned first.
// Creates planned together (before) must agree with this one's count.

func checkPlannedTogether(p, g string, self plannedGroupCreate, before map[string]plannedGroupCreate, diags *diag.Diagnostics) {
	if self.Unset || self.InitialShardCount == nil {
		return
	}
	n := *self.InitialShardCount
	counts := map[int32][]string{}
	var unset []string
	for name, c := range before {
		if c.InitialShardCount != nil {
			counts[int32(*c.InitialShardCount)] = append(counts[int32(*c.InitialShardCount)], name)
		}
		if c.Unset {
			unset = append(unset, fmt.Sprintf("%q", name))
		}
	}
	if len(counts) > 1 || len(counts) == 1 && len(counts[int32(n)]) == 0 {
		diags.AddError("Groups created together under one stream prefix disagree on the shard count", fmt.Sprintf(
			"This configuration creates %s under stream prefix %q, and group %q with initial_shard_count = %d. Producers route with one "+
				"shard count per prefix, so the groups must agree. Nothing was sent to the coordinator.\n\nSet the same initial_shard_count "+
				"on every group of the prefix (or on one of them and omit it on the others).", describeSiblings(counts), p, g, n))
	}
	if len(unset) == 0 {
		return
	}
	sort.Strings(unset)
	diags.AddAttributeError(path.Root("initial_shard_count"), fmt.Sprintf("Groups created together under stream prefix %q need one shard count", p), fmt.Sprintf(
		"This configuration creates group %q with initial_shard_count = %d under stream prefix %q, which has no other group, and "+
			"group(s) %s without initial_shard_count that do not depend on it. Terraform may create those first, with the "+
			"coordinator's default count (12 unless COORDINATOR_DEFAULTS_INITIAL_SHARD_COUNT says otherwise), which would split the prefix: producers route with one shard count per prefix. "+
			"Nothing was sent to the coordinator.\n\nSet initial_shard_count = %d on %s too, or make them depend on group %q "+
			"(depends_on = [redisstreamcoordinator_group.<name>]) so that they are created after it and inherit its count.",
		g, n, p, strings.Join(unset, ", "), n, strings.Join(unset, ", "), g))
}
