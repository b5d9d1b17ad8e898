package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// watchedGroupsHCL is n groups (prefixes base-00, …) created with 4 shards,
// each with a shard count at count.
func watchedGroupsHCL(base string, n, count int) string {
	return fmt.Sprintf(`
resource "redisstreamcoordinator_group" "g" {
  count               = %[2]d
  stream_prefix       = format("%[1]s-%%02d", count.index)
  consumer_group      = "svc"
  initial_shard_count = 4
  deletion_policy     = "DELETE"
}

resource "redisstreamcoordinator_group_shard_count" "s" {
  count          = %[2]d
  stream_prefix  = redisstreamcoordinator_group.g[count.index].stream_prefix
  consumer_group = redisstreamcoordinator_group.g[count.index].consumer_group
  shard_count    = %[3]d
  # A hold the test fails to release ends the apply, not the test binary.
  timeouts {
    update = "3m"
  }
}
`, base, n, count)
}

// An apply of several prefixes' shard counts waits with one shared poll.
// Every prefix's migration is held (an undrained removed shard) until every
// scale has been sent and every wait has read its migration's invariant
// violations (due once it lingered violationsEvery); the second groups listing after that releases
// them all and ticks the coordinator before it is answered, so
// that one listing shows every migration finished. With one poll for the run
// it serves every wait: the final read of each migration follows it and no
// other listing comes before the last of them (a poll per prefix would need
// a listing per prefix). The waits send no per-group polls (only the apply's
// own reads of each group before its scale, and at most one
// invariant-violation read per migration), read each finished migration
// once, and the apply completes; the state it records, before the wait and
// after it, costs no read of the group: after it, it is the poll's last
// record of the group.
func TestAccGroupShardCount_waitsShareOnePoll(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds migrations, ticks from a listing and counts the coordinator's requests by route")
	base := acctest.RandomName("shared")
	const n = 3

	var mu sync.Mutex
	var groupGETsBeforeScale, listingsAfterRecorded, listingsAfterRelease, finalReads int
	released, anyScaled := false, false
	settled := map[string]bool{} // prefixes whose state was recorded after the scale
	// Listings as of the last migration's final read (the waits are over),
	// group reads as of the first.
	var listingsWaited, groupGETsWaited int
	recorded := func() bool { return len(settled) == n }
	hold := func() {
		for i := 0; i < n; i++ {
			p := countedPrefix(base, i)
			c.SetUndrainedShard(p, "svc", 3, true)
			// A prefix's first assignments read after its scale is its
			// wait's invariant-violation read, once the held migration
			// lingered violationsEvery: its wait is registered with the
			// poll. (The refresh reads groups too:
			// only the reads after the first scale are the apply's.)
			scaled := false
			c.InjectFault(coordinator.Fault{Method: "POST", Path: "/coord/v1/streams/" + p + "/scale", Kind: coordinator.FaultDelay,
				OnMatch: func() {
					mu.Lock()
					defer mu.Unlock()
					if !anyScaled {
						anyScaled, groupGETsBeforeScale = true, c.RequestCount("GET", coordinator.RouteGroup)
					}
					scaled = true
				}})
			c.InjectFault(coordinator.Fault{Method: "GET", Path: "/coord/v1/monitoring/streams/" + p + "/groups/svc/assignments", Times: 1 << 20, Kind: coordinator.FaultDelay,
				OnMatch: func() {
					mu.Lock()
					defer mu.Unlock()
					if scaled {
						settled[p] = true
					}
				}})
		}
		c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMigration, Kind: coordinator.FaultDelay, Times: n,
			OnMatch: func() {
				mu.Lock()
				defer mu.Unlock()
				if finalReads++; finalReads == 1 {
					// No wait has ended yet: every group read so far is one
					// an apply sent before it waits.
					groupGETsWaited = c.RequestCount("GET", coordinator.RouteGroup) - groupGETsBeforeScale
				}
				listingsWaited = listingsAfterRelease
			}})
		c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Times: 1 << 20, Kind: coordinator.FaultDelay,
			OnMatch: func() {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case released:
					listingsAfterRelease++
				case recorded():
					if listingsAfterRecorded++; listingsAfterRecorded < 2 {
						return
					}
					released = true
					for i := 0; i < n; i++ {
						c.SetUndrainedShard(countedPrefix(base, i), "svc", 3, false)
					}
					// DRAINING at the first tick, DEPRECATED at the next.
					c.Tick()
					c.Tick()
				}
			}})
	}
	config := a.env.ProviderConfig()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config + watchedGroupsHCL(base, n, 4)},
			{
				PreConfig: func() { c.ResetRequestCounts(); hold() },
				Config:    config + watchedGroupsHCL(base, n, 2),
				Check: resource.ComposeTestCheckFunc(
					// First, before the checks below read groups: after the
					// first scale, no apply read its group: the state after
					// the wait comes from the poll's last listing, read after
					// the scale, and the state before it reads nothing.
					func(*terraform.State) error {
						mu.Lock()
						defer mu.Unlock()
						if got := c.RequestCount("GET", coordinator.RouteGroup) - groupGETsBeforeScale; got > 0 {
							return fmt.Errorf("%d group GETs after the first scale, want none: the poll's listing records each group", got)
						}
						return nil
					},
					a.migrationFinished(countedPrefix(base, 0), "svc", 2),
					a.migrationFinished(countedPrefix(base, 1), "svc", 2),
					a.migrationFinished(countedPrefix(base, 2), "svc", 2),
					func(*terraform.State) error {
						c.ClearFaults()
						mu.Lock()
						defer mu.Unlock()
						counts := c.RequestCounts()
						switch {
						case !released:
							return fmt.Errorf("the waits sent fewer than 2 groups listings once every scale was recorded; requests: %v", counts)
						case finalReads != n || c.RequestCount("GET", coordinator.RouteMigration) != n:
							return fmt.Errorf("%d migration reads, want one per finished migration (%d); requests: %v", c.RequestCount("GET", coordinator.RouteMigration), n, counts)
						case listingsWaited > 0:
							return fmt.Errorf("%d more listings before the last final read: the listing that showed every migration finished did not serve every wait; requests: %v", listingsWaited, counts)
						case c.RequestCount("GET", coordinator.RouteMembers) > 0 || c.RequestCount("GET", coordinator.RouteAssignments) > n:
							return fmt.Errorf("the waits read members, or assignments more than once per migration; requests: %v", counts)
						case groupGETsWaited > 0:
							return fmt.Errorf("%d group GETs from the first scale to the first final read, want none; requests: %v",
								groupGETsWaited, counts)
						}
						return nil
					},
				),
			},
		},
	})
}

// An executor's first reading of its prefix is a listing issued after it
// asked (prefix.Watcher.Join), never the run's newest one as such:
// prefix q's wait reads its finished migration right after the listing that
// showed it done, and another actor creates group "d" in prefix p at that
// moment; p's shard count, which depends on q's, then starts. Served by
// that listing, its basis check missed "d" and its stream scale rescaled
// it, a change no plan showed (review of the shared listing); with a
// reading of its own it refuses the plan as stale, naming "d".
func TestAccGroupShardCount_firstReadingPostdatesAnotherPrefixsWait(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "creates a group at the moment another prefix's wait reads its finished migration")
	q := acctest.RandomName("revq")
	p := acctest.RandomName("revp")
	config := func(qc, pc int) string {
		cfg := a.env.ProviderConfig()
		cfg += groupHCL("q", q, "svc", "initial_shard_count = 4")
		cfg += shardCountHCL("qc", q, "svc", qc, "depends_on = [redisstreamcoordinator_group.q]")
		for _, g := range []string{"a", "b"} {
			cfg += groupHCL(g, p, g, "initial_shard_count = 2")
		}
		return cfg + shardCountHCL("pc", p, "a", pc,
			"depends_on = [redisstreamcoordinator_group.a, redisstreamcoordinator_group.b, redisstreamcoordinator_group_shard_count.qc]")
	}
	var once sync.Once
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(4, 2)},
			{
				PreConfig: func() {
					// q's wait reads its finished migration once, right after the
					// listing that showed it finished: another actor creates
					// p/d at exactly that moment.
					c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMigration, Kind: coordinator.FaultDelay, Times: 1 << 20,
						OnMatch: func() {
							once.Do(func() {
								ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
								defer cancel()
								n := int32(2)
								if _, err := a.env.Client().CreateGroup(ctx, p, "d", &n, client.Mutation{}); err != nil {
									t.Errorf("out-of-band create: %v", err)
								}
							})
						}})
				},
				Config:      config(2, 1),
				ExpectError: regexp.MustCompile(`(?s)Stale plan: the groups of stream prefix.*` + words(`group "d" (2 shards) appeared`)),
			},
		},
	})
}

// While another prefix's wait polls, an executor's first reading of its
// prefix is the waits' next poll round, joined in flight, not a listing of
// its own (prefix.Watcher.Join, the branch the bench's many prefixes
// take). Prefix q's scale 4→2 is held by an undrained shard, so its wait
// polls; p's shard count depends on a data source (a group of a third
// prefix, created out of band, so no refresh reads it) whose read, deferred
// to the apply, the coordinator holds until q's wait has polled twice. From
// that read's answer to p's stream scale, the only listings are the waits'
// rounds and, when Terraform's re-plan of p's change finds the plan's
// listing too old (planGroupsTTL), that re-plan's snapshot; and the apply
// still brings both prefixes to their counts. (No clock decides the join:
// p's reading waits for the round as long as q's wait polls.)
func TestAccGroupShardCount_firstReadingJoinsTheWaitsRound(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds a migration and a read, and counts the coordinator's listings by request id")
	q := acctest.RandomName("joinq")
	p := acctest.RandomName("joinp")
	r := acctest.RandomName("joinr")
	config := func(gate string, qc, pc int) string {
		cfg := a.env.ProviderConfig()
		cfg += groupHCL("q", q, "svc", "initial_shard_count = 4")
		// A hold the test fails to release ends the apply, not the test binary.
		cfg += shardCountHCL("qc", q, "svc", qc, "depends_on = [redisstreamcoordinator_group.q]", "timeouts {\n    update = \"5m\"\n  }")
		for _, g := range []string{"a", "b"} {
			cfg += groupHCL(g, p, g, "initial_shard_count = 2")
		}
		cfg += fmt.Sprintf(`
resource "terraform_data" "gate" {
  input = %q
}
# Read at apply: it depends on a resource the apply changes.
data "redisstreamcoordinator_group" "gate" {
  stream_prefix  = %q
  consumer_group = "gate"
  depends_on     = [terraform_data.gate]
}
`, gate, r)
		return cfg + shardCountHCL("pc", p, "a", pc,
			"depends_on = [redisstreamcoordinator_group.a, redisstreamcoordinator_group.b, data.redisstreamcoordinator_group.gate]")
	}
	var mu sync.Mutex
	var released, scaled bool
	var atRelease int
	var sinceRelease []string // the listings' request ids, from the gate to p's scale
	ids := func() []string { return c.RequestIDs("GET", coordinator.RouteMonitoringGroups) }
	hold := func() {
		c.SetUndrainedShard(q, "svc", 3, true)
		c.InjectFault(coordinator.Fault{Method: "GET", Path: "/coord/v1/streams/" + r + "/groups/gate", Kind: coordinator.FaultDelay,
			OnMatch: func() {
				// The read waits here until q's wait has polled twice, so
				// p's executor starts while the poll runs.
				whileWaiting(t, c, q, "svc", func() {
					mu.Lock()
					defer mu.Unlock()
					released, atRelease = true, len(ids())
				})
			}})
		c.InjectFault(coordinator.Fault{Method: "POST", Path: "/coord/v1/streams/" + p + "/scale", Kind: coordinator.FaultDelay,
			OnMatch: func() {
				mu.Lock()
				defer mu.Unlock()
				scaled = true
				sinceRelease = ids()[atRelease:]
				c.SetUndrainedShard(q, "svc", 3, false)
			}})
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					n := int32(1)
					if _, err := a.env.Client().CreateGroup(ctxT(t), r, "gate", &n, client.Mutation{}); err != nil {
						t.Fatalf("out-of-band create: %v", err)
					}
				},
				Config: config("one", 4, 2),
			},
			{
				PreConfig: hold,
				Config:    config("two", 2, 1),
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(q, "svc", 2),
					a.migrationFinished(p, "a", 1),
					a.migrationFinished(p, "b", 1),
					func(*terraform.State) error {
						c.ClearFaults()
						mu.Lock()
						defer mu.Unlock()
						if !released || !scaled {
							return fmt.Errorf("the gate was released: %t, p was scaled: %t", released, scaled)
						}
						rounds, own := 0, 0
						for _, id := range sinceRelease {
							switch {
							case strings.Contains(id, "-"+waitGroupsOperation+"-"):
								rounds++
							case !strings.Contains(id, "-"+snapshotGroupsOperation+"-"):
								own++
							}
						}
						switch {
						case own != 0:
							return fmt.Errorf("%d listings of an executor's own before p's scale, want none: p's first reading did not join the poll; listings since the gate: %q", own, sinceRelease)
						case rounds < 1:
							return fmt.Errorf("no poll round between the gate and p's scale; listings since the gate: %q", sinceRelease)
						}
						return nil
					},
				),
			},
		},
	})
}
