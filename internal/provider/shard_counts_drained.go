package provider

import (
	"fmt"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// A new group cannot be created at 0 shards, so a group added to a drained
// prefix is allowed a different count, with a warning.

func drainedPrefix(counts map[int32][]string) bool {
	return len(counts) == 1 && len(counts[0]) > 0
}

func drainedPrefixWarning(p, g string, want int32, siblings string) diag.Diagnostic {
	return diag.NewAttributeWarningDiagnostic(path.Root("initial_shard_count"),
		fmt.Sprintf("New group of a drained stream prefix: %d shards, its siblings 0", want), fmt.Sprintf(
			"Stream prefix %q has %s: it is drained to 0 shards (producers refuse to publish to it). The coordinator creates a "+
				"group with at least 1 shard and a new group does not inherit its siblings' count, so group %q is created with "+
				"initial_shard_count = %d, and the prefix is at two shard counts until you bring it back to one:\n"+
				"  - to use the prefix again at %d shards, scale it to %d with redisstreamcoordinator_group_shard_count (the "+
				"coordinator allows a scale from 0 to N; group %q, already at %d, gets a no-op), then let producers re-read routing;\n"+
				"  - to keep the prefix drained, scale it to 0 with redisstreamcoordinator_group_shard_count after the create.\n"+
				"Until then, producers that route with group %q's count write to shards its 0-shard siblings never read.",
			p, siblings, g, want, want, want, g, want, g))
}

func drainedSiblings(siblings []client.Group) bool {
	return len(siblings) > 0 && !slices.ContainsFunc(siblings, func(s client.Group) bool { return s.ShardCount != 0 })
}

func siblingHasCount(siblings []client.Group, n int32) bool {
	return slices.ContainsFunc(siblings, func(s client.Group) bool { return s.ShardCount == n })
}
