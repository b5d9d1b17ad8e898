package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// For a later group the leftover stream keys p:0… are the live streams of its
// siblings, so key removal is advised only when a read after the failure (under
// the prefix lock) shows the create was the prefix's first.

type prefixAfterFailure struct {
	others []string // other groups of the prefix, "name (n shards)"
	err    error    // the read failed: whether the create was the first is unknown
}

func readPrefixAfterFailure(ctx context.Context, api *client.Client, p, g string) prefixAfterFailure {
	groups, err := api.Groups(ctx)
	f := prefixAfterFailure{err: err}
	for _, grp := range prefix.FromListing(groups, p).Without(g).Groups {
		f.others = append(f.others, fmt.Sprintf("%q (%d shards)", grp.ConsumerGroup, grp.ShardCount))
	}
	return f
}

func (f prefixAfterFailure) first() bool { return f.err == nil && len(f.others) == 0 }

func (f prefixAfterFailure) keysAdvice(p string, count *int32) string {
	switch {
	case f.first():
		return fmt.Sprintf("The coordinator failed to create the Redis streams of the prefix's first group and deleted the group's "+
			"metadata again (it has no other group of stream prefix %q), but the stream keys it had already made stay in Redis and are "+
			"no other group's: any of %s (the coordinator does not say how far it got). While they exist, a retry fails with 409 "+
			"STREAM_PREFIX_ALREADY_EXISTS, so the provider did not re-send the create. Fix the Redis problem above first. %s",
			p, leftoverKeys(p, count), clearKeysHint(p, count))
	case f.err == nil:
		return fmt.Sprintf("Stream prefix %q has other groups (%s), so this create was not the prefix's first: the keys %s are their "+
			"live streams and must stay. Provisioning for a later group of a prefix is safe to retry: fix the Redis problem above, then "+
			"run terraform apply again.", p, strings.Join(f.others, ", "), keysOf(p))
	default:
		return fmt.Sprintf("Reading the prefix's groups after the failure failed too (%v), so the provider cannot tell whether this was "+
			"the prefix's first group. If stream prefix %q has other groups (GET /monitoring/groups), the keys %s are their live "+
			"streams: leave them, and run terraform apply again once Redis is fixed (a later group's create is safe to retry). If it "+
			"has none, the failed create may have left %s, and a retry fails with 409 STREAM_PREFIX_ALREADY_EXISTS until they are "+
			"gone: check them with redis-cli --scan --pattern %s and XINFO GROUPS before removing anything.",
			f.err, p, keysOf(p), leftoverKeys(p, count), shellQuote(scanPatternEscape(p)+":*"))
	}
}

func keysOf(p string) string { return fmt.Sprintf("%s:0, %s:1, …", p, p) }
