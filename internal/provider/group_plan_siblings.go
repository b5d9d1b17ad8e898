package provider

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// Groups of a new stream prefix created in one apply, some with
// initial_shard_count and some without. Terraform creates independent
// resources in any order, and a group without a count created before the
// one with a count would get the coordinator's default (12 unless
// configured otherwise) and split the
// prefix. A group that depends on the one with the count (depends_on, or a
// reference) is safe: Terraform plans and creates it after, and its create
// inherits the count under the prefix lock. The plan cannot see depends_on,
// but it sees the order: Terraform plans a resource after everything it
// depends on, so a group with a count that finds a group without one planned
// before it knows nothing orders their creates (checkUnsetPlannedBefore).
// What the plan cannot rule out, the create refuses before sending anything
// (createCount reads the prefix under its lock, this apply's creates
// included): never a split prefix.

// checkUnsetPlannedBefore fails the plan of group g, which has a count
// (self), when a group of the same new prefix without initial_shard_count
// was planned before it (registerGroupCreateOfPrefix returns the creates
// planned before, atomically).
func checkUnsetPlannedBefore(p, g string, self plannedGroupCreate, before map[string]plannedGroupCreate, diags *diag.Diagnostics) {
	if self.Unset || self.InitialShardCount == nil {
		return
	}
	var unset []string
	for name, c := range before {
		if c.Unset {
			unset = append(unset, fmt.Sprintf("%q", name))
		}
	}
	if len(unset) == 0 {
		return
	}
	sort.Strings(unset)
	n := *self.InitialShardCount
	diags.AddAttributeError(path.Root("initial_shard_count"), fmt.Sprintf("Groups created together under stream prefix %q need one shard count", p), fmt.Sprintf(
		"This configuration creates group %q with initial_shard_count = %d under stream prefix %q, which has no other group, and "+
			"group(s) %s without initial_shard_count that do not depend on it. Terraform may create those first, with the "+
			"coordinator's default count (12 unless COORDINATOR_DEFAULTS_INITIAL_SHARD_COUNT says otherwise), which would split the prefix: producers route with one shard count per prefix. "+
			"Nothing was sent to the coordinator.\n\nSet initial_shard_count = %d on %s too, or make them depend on group %q "+
			"(depends_on = [redisstreamcoordinator_group.<name>]) so that they are created after it and inherit its count.",
		g, n, p, strings.Join(unset, ", "), n, strings.Join(unset, ", "), g))
}
