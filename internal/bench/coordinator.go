package bench

import (
	"fmt"
	"strings"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// The principals of every benchmark coordinator: Terraform's WRITE user, and
// a separate one for the benchmark's own setup and checks, so its calls
// never share a rate-limit bucket (principal:prefix:group) with Terraform's.
const (
	tfUser, tfPassword       = "terraform", "bench-terraform-pass"
	setupUser, setupPassword = "bench-setup", "bench-setup-pass"
)

// CoordinatorOptions are the knobs a scenario turns; zero values are the
// real server's defaults (1 s loop tick, rate limit off).
type CoordinatorOptions struct {
	RateLimitPerWindow int // > 0 enables the rate limit
	RateLimitWindow    time.Duration
}

// startCoordinator starts a fresh in-repo coordinator on a loopback port.
func startCoordinator(o CoordinatorOptions) (*coordinator.Coordinator, error) {
	write := []coordinator.Role{coordinator.RoleWrite}
	c := coordinator.New(coordinator.Options{
		Users: []coordinator.User{
			{Username: tfUser, Password: tfPassword, Roles: write},
			{Username: setupUser, Password: setupPassword, Roles: write},
		},
		TokenSecret:        "bench-secret",
		RateLimitEnabled:   o.RateLimitPerWindow > 0,
		RateLimitPerWindow: o.RateLimitPerWindow,
		RateLimitWindow:    o.RateLimitWindow,
	})
	if err := c.Start("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("start coordinator: %w", err)
	}
	return c, nil
}

// setupClient is the benchmark's own API client (never Terraform's bucket).
func setupClient(c *coordinator.Coordinator) (*client.Client, error) {
	return client.New(client.Config{
		Endpoint: c.URL(), Username: setupUser, Password: setupPassword, RunID: "bench",
		MaxRetries: 3, RetryWaitMin: 50 * time.Millisecond, RetryWaitMax: time.Second,
	})
}

// totalRequests sums RequestCounts.
func totalRequests(counts map[string]int) int {
	n := 0
	for _, v := range counts {
		n += v
	}
	return n
}

// providerBlock configures the real provider with its defaults (retry waits,
// timeouts, max_retries 10), as a user would.
func providerBlock(endpoint string) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    redisstreamcoordinator = { source = %q }
  }
}

provider "redisstreamcoordinator" {
  endpoint = %q
  username = %q
  password = %q
}
`, acctest.ProviderSource, endpoint, tfUser, tfPassword)
}

// prefixName names the i-th benchmark stream prefix; each group has its own
// prefix, as one shard-count resource per prefix is the supported layout.
func prefixName(i int) string { return fmt.Sprintf("bench-%04d", i) }

// groupsConfig is n groups created with initial shards, each with a
// shard-count resource, in the real provider's words or (noop) the
// do-nothing provider's.
func groupsConfig(endpoint string, n, initial, shardCount int, noop bool) string {
	var b strings.Builder
	typ := "redisstreamcoordinator"
	if noop {
		typ = "noop"
		fmt.Fprintf(&b, `terraform {
  required_providers {
    noop = { source = %q }
  }
}

provider "noop" {
  endpoint = %q
  username = %q
  password = %q
}
`, noopSource, endpoint, tfUser, tfPassword)
	} else {
		b.WriteString(providerBlock(endpoint))
	}
	fmt.Fprintf(&b, `
resource "%[1]s_group" "g" {
  count               = %[2]d
  stream_prefix       = format("bench-%%04d", count.index)
  consumer_group      = "svc"
  initial_shard_count = %[4]d
  deletion_policy     = "DELETE"
}

resource "%[1]s_group_shard_count" "s" {
  count          = %[2]d
  stream_prefix  = %[1]s_group.g[count.index].stream_prefix
  consumer_group = %[1]s_group.g[count.index].consumer_group
  shard_count    = %[3]d
}
`, typ, n, shardCount, initial)
	return b.String()
}

// LiteralShapeFrom is the workspace size from which the size scenario's
// shard counts name their group literally (with depends_on) instead of
// through references to the group resource: by default every size, which
// is the shape the bulk-import example and guide use. Terraform evaluates
// `redisstreamcoordinator_group.g[count.index]` by building the whole
// resource's value of N instances, so a reference per instance costs
// Terraform itself O(N²), for every provider alike, the do-nothing ones
// included (at N = 1,000 the same-shape floor planned 8× slower than the
// one-attribute floor, and 5,000 referencing pairs take longer than the
// whole benchmark budget). `bench -literal-from 2000` measures the
// referencing shape below 2,000 again.
var LiteralShapeFrom = 0

// literalShape rewrites a groupsConfig so the shard counts name their
// groups literally and depend on the group resource with depends_on.
func literalShape(config string) string {
	for _, typ := range []string{"redisstreamcoordinator", "noop"} {
		config = strings.Replace(config,
			fmt.Sprintf("  stream_prefix  = %[1]s_group.g[count.index].stream_prefix\n  consumer_group = %[1]s_group.g[count.index].consumer_group\n", typ),
			fmt.Sprintf("  stream_prefix  = format(\"bench-%%04d\", count.index)\n  consumer_group = \"svc\"\n  depends_on     = [%s_group.g]\n", typ), 1)
	}
	return config
}

// oneConfig is n resources of the one-attribute do-nothing provider.
func oneConfig(endpoint string, n int) string {
	return fmt.Sprintf(`terraform {
  required_providers {
    noop = { source = %q }
  }
}

provider "noop" {
  endpoint = %q
}

resource "noop_one" "r" {
  count = %d
  name  = format("bench-%%04d", count.index)
}
`, noopSource, endpoint, n)
}
