package provider

import "testing"

// The stale replacement of group_replace_stale_test.go with g2's
// initial_shard_count omitted: the plan showed the count g2 inherits (4),
// and the create's plan at apply computed 6 from the moved g1. Before, the
// apply sent the DELETE and then failed with "Provider produced
// inconsistent final plan" on initial_shard_count, shard_count and
// sibling_shard_counts; now the delete is refused before it is sent.
func TestAccGroup_staleReplaceInheritingRefusedBeforeDelete(t *testing.T) {
	for _, tc := range []staleReplaceCase{
		{name: "replace_stream_scale", streamScale: true},
		{name: "rename_group_scale", rename: true},
	} {
		t.Run(tc.name, func(t *testing.T) { testStaleReplace(t, tc) })
	}
}
