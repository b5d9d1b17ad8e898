package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// testTiming is the settle timing of the tests' in-process provider. The
// settle bound is the coordinator's critical-section bound; the in-repo
// coordinator has no such queue, and whether a group is still there after
// the bound does not depend on its length in these tests (they delete it,
// or not, through hooks), so keep the tests fast.
func testTiming() settleTiming { return settleTiming{createSettleBound: 20 * time.Millisecond} }

// newTestProvider is the provider as New makes it, with testTiming.
func newTestProvider() *coordinatorProvider {
	return &coordinatorProvider{version: "test", timing: testTiming()}
}

// TestAccGroup_provisioningFailureOnFirstCreateExplained: 503
// REDIS_STREAM_PROVISIONING_FAILED on a prefix's first create, after shard
// k, is not re-sent; it is reported as the provisioning failure with the keys
// it may have left and how to clear them. Applying again before clearing
// them meets 409 STREAM_PREFIX_ALREADY_EXISTS, explained the same way; once
// they are cleared the create succeeds (issue 11.1).
func TestAccGroup_provisioningFailureOnFirstCreateExplained(t *testing.T) {
	a := newAccTest(t, acctest.Options{StreamProvisioning: true})
	c := a.env.RequireInRepo(t, "fails stream provisioning after shard 2, as a Redis error would")
	p := acctest.RandomName("provfail")
	c.FailProvisioning(coordinator.ProvisioningFault{StreamPrefix: p, Operation: coordinator.ProvisionCreate, AfterShards: 2})
	config := a.env.ProviderConfig() + groupHCL("test", p, "svc", "initial_shard_count = 4")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ExpectError: regexp.MustCompile(`(?s)REDIS_STREAM_PROVISIONING_FAILED.*` + words("first group and deleted the group's metadata again") +
					".*" + words(p+":0 … "+p+":3") + `.*STREAM_PREFIX_ALREADY_EXISTS.*` + words("did not re-send") + ".*" + words("redis-cli UNLINK "+p)),
			},
			{
				// Applying again without clearing the keys: the coordinator refuses the prefix.
				Config: config,
				ExpectError: regexp.MustCompile(`(?s)STREAM_PREFIX_ALREADY_EXISTS.*` + words("REDIS_STREAM_PROVISIONING_FAILED deletes the metadata but keeps the keys") +
					".*" + words("redis-cli UNLINK "+p)),
			},
			{
				// The user clears the keys (redis-cli UNLINK p p:0 … p:3) and applies again.
				PreConfig: func() {
					keys := []string{p}
					for i := 0; i < 4; i++ {
						keys = append(keys, fmt.Sprintf("%s:%d", p, i))
					}
					if n := c.DeleteRedisKeys(keys...); n != 2 {
						t.Fatalf("the failed create left %d of the named keys, want 2 (%s:0 and %s:1)", n, p, p)
					}
				},
				Config: config,
				Check:  a.expectGroup(p, "svc", shardCountIs(4)),
			},
		},
	})
	// No create was re-sent automatically: one per apply.
	if creates := auditEvents(c, p, "CREATE_GROUP"); len(creates) != 3 {
		t.Fatalf("want one create per apply (failed, refused, created), got %+v", creates)
	}
}

// TestAccGroup_lostCreateStillProvisioningIsAdoptedOnceSettled: the create's
// connection is lost while the coordinator still runs it (held mid
// provisioning, the group already visible). The provider does not adopt the
// visible group at once: it adopts it only once it is still there after the
// settle bound, here after the held create was released (issue 11.5).
func TestAccGroup_lostCreateStillProvisioningIsAdoptedOnceSettled(t *testing.T) {
	testLostCreateStillProvisioning(t, true)
}

// TestAccGroup_lostCreateDeletedAgainIsNotAdopted: the same, but the held
// create then fails provisioning and the coordinator deletes the group it
// showed: it is not adopted, and the error says why and what to clear.
func TestAccGroup_lostCreateDeletedAgainIsNotAdopted(t *testing.T) {
	testLostCreateStillProvisioning(t, false)
}

func testLostCreateStillProvisioning(t *testing.T, succeeds bool) {
	a := newAccTest(t, acctest.Options{StreamProvisioning: true})
	c := a.env.RequireInRepo(t, "holds a create mid-provisioning while its connection is lost")
	p, g := acctest.RandomName("inflight"), "svc"
	hold := c.HoldCreate(p, g)
	served := make(chan struct{})
	// The provider's create reaches the coordinator and runs on, held, while
	// the provider's connection is lost: the held create stands in for it.
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultResetBeforeApply,
		OnMatch: func() {
			go func() {
				defer close(served)
				count := int32(3)
				_, _ = a.env.Client().CreateGroup(ctxT(t), p, g, &count, client.Mutation{RequestID: "terraform-lost-create"})
			}()
			<-hold.Reached()
		}})
	// The provider's first read finds the group (visible while held); its
	// second read, after the settle bound, waits until the held create ended.
	c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteGroup, Kind: coordinator.FaultDelay})
	c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteGroup, Kind: coordinator.FaultDelay, Delay: time.Minute,
		Until: func() bool {
			if succeeds {
				hold.Release()
			} else {
				hold.FailProvisioning(2)
			}
			<-served
			return true
		}})
	step := resource.TestStep{Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 3")}
	if succeeds {
		step.Check = resource.ComposeTestCheckFunc(
			a.diags.ExpectWarning("Adopted a group whose create response was lost", "still there after"),
			a.expectGroup(p, g, shardCountIs(3)),
		)
	} else {
		step.ExpectError = regexp.MustCompile(`(?s)` + words("lost create was rolled back by the coordinator") + ".*" + words("deleted again") +
			`.*REDIS_STREAM_PROVISIONING_FAILED.*` + words("nothing was adopted") + ".*" + words(p+":0 … "+p+":2"))
	}
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: a.factories(), Steps: []resource.TestStep{step}})
	if n := c.RequestCount("POST", coordinator.RouteGroup); n != 2 {
		t.Fatalf("want the provider's lost create and the in-flight one only (no re-send), got %d POSTs", n)
	}
}

// TestAccGroup_lostCreateThatLandsLateIsOurs: the create's answer is lost and
// the group is not visible yet (still queued); the re-send meets 409
// GROUP_ALREADY_EXISTS. The group matches this create and is still there
// after the settle bound, so it is adopted as this run's own, never with an
// "import it" error (issue 11.5).
func TestAccGroup_lostCreateThatLandsLateIsOurs(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "drops the create's answer and hides the group from the first read")
	p, g := acctest.RandomName("late"), "svc"
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultResetAfterApply})
	c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteGroup, Kind: coordinator.FaultRespond, Status: 404,
		ErrorCode: "GROUP_NOT_FOUND", Message: "Group not found"})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 3"),
			Check: resource.ComposeTestCheckFunc(
				a.diags.ExpectWarning("Adopted a group whose create response was lost", "409 GROUP_ALREADY_EXISTS", "landed meanwhile"),
				a.expectGroup(p, g, shardCountIs(3)),
				func(*terraform.State) error {
					creates := auditEvents(c, p, "CREATE_GROUP")
					if len(creates) != 2 || creates[0].Outcome != "SUCCESS" || creates[1].Outcome == "SUCCESS" {
						return fmt.Errorf("want the applied create and the refused re-send, got %+v", creates)
					}
					return nil
				},
			),
		}},
	})
}

// TestAccGroup_createAnsweredByGeneric500IsReadBackBeforeResending: a create
// answered by Spring's generic 500 (no errorCode: a store or mutex failure)
// is ambiguous. Failed before the commit: the provider reads the group back,
// finds none, and sends the same create again. Failed after the commit: it
// finds the group as this create made it and adopts it, never creating twice
// (issue 11.4).
func TestAccGroup_createAnsweredByGeneric500IsReadBackBeforeResending(t *testing.T) {
	for _, tc := range []struct {
		name      string
		kind      coordinator.FaultKind
		posts     int
		adoptWarn bool
	}{
		{"beforeCommit", coordinator.FaultStoreError, 2, false},
		{"afterCommit", coordinator.FaultStoreErrorAfterCommit, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAccTest(t, acctest.Options{})
			c := a.env.RequireInRepo(t, "answers the create with a generic 500")
			p, g := acctest.RandomName("generic500"), "svc"
			c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: tc.kind})
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: a.factories(),
				Steps: []resource.TestStep{{
					Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 2"),
					Check: resource.ComposeTestCheckFunc(
						func(*terraform.State) error {
							if n := c.RequestCount("POST", coordinator.RouteGroup); n != tc.posts {
								return fmt.Errorf("want %d POSTs, got %d", tc.posts, n)
							}
							if n := c.RequestCount("GET", coordinator.RouteGroup); n < 1 {
								return fmt.Errorf("the group was not read back after the 500")
							}
							var applied int
							for _, e := range auditEvents(c, p, "CREATE_GROUP") {
								if e.Outcome == "SUCCESS" {
									applied++
								}
							}
							if applied != 1 {
								return fmt.Errorf("want exactly one applied CREATE_GROUP, got %d", applied)
							}
							if tc.adoptWarn {
								return a.diags.ExpectWarning("Adopted a group whose create response was lost")(nil)
							}
							return nil
						},
						a.expectGroup(p, g, shardCountIs(2)),
					),
				}},
			})
		})
	}
}

// words matches the words of s in order, across the line wrapping of
// Terraform's diagnostics.
func words(s string) string {
	parts := strings.Fields(s)
	for i, w := range parts {
		parts[i] = regexp.QuoteMeta(w)
	}
	return strings.Join(parts, `\s+`)
}

// The commands in the leftover-keys hint can be pasted into a shell for any
// name the coordinator accepts.
func TestClearKeysHintQuotesNames(t *testing.T) {
	for _, tc := range []struct{ p, want string }{
		{"orders", "--pattern 'orders:*' lists them; XINFO GROUPS shows readers), remove them, e.g. `redis-cli UNLINK orders` and `redis-cli UNLINK orders:0 … orders:3`"},
		{"Legacy Orders", "--pattern 'Legacy Orders:*' lists them; XINFO GROUPS shows readers), remove them, e.g. `redis-cli UNLINK 'Legacy Orders'` and `redis-cli UNLINK 'Legacy Orders:0' … 'Legacy Orders:3'`"},
		{"it's*", `--pattern 'it'\''s\*:*' lists them; XINFO GROUPS shows readers), remove them, e.g. ` + "`redis-cli UNLINK 'it'\\''s*'` and `redis-cli UNLINK 'it'\\''s*:0' … 'it'\\''s*:3'`"},
		{"주문", "--pattern '주문:*' lists them; XINFO GROUPS shows readers), remove them, e.g. `redis-cli UNLINK '주문'` and `redis-cli UNLINK '주문:0' … '주문:3'`"},
	} {
		four := int32(4)
		if got := clearKeysHint(tc.p, &four); !strings.Contains(got, tc.want) {
			t.Errorf("clearKeysHint(%q) = %q\nwant it to contain %q", tc.p, got, tc.want)
		}
	}
}

// TestAccGroup_provisioningFailureOfLaterGroupKeepsSiblingStreams: the second
// group of a new prefix, created in the same apply as the first, fails
// provisioning. Its plan saw no sibling (the first was planned in the same
// run), but the keys p:0 … are the first group's live streams now: the
// advice says the retry is safe and names no command that removes keys
// (issue 24 §5).
func TestAccGroup_provisioningFailureOfLaterGroupKeepsSiblingStreams(t *testing.T) {
	a := newAccTest(t, acctest.Options{StreamProvisioning: true})
	c := a.env.RequireInRepo(t, "fails stream provisioning of the second group")
	p := acctest.RandomName("provlate")
	c.FailProvisioning(coordinator.ProvisioningFault{StreamPrefix: p, ConsumerGroup: "b", Operation: coordinator.ProvisionCreate, AfterShards: 1})
	config := a.env.ProviderConfig() + groupHCL("a", p, "a", "initial_shard_count = 2") +
		groupHCL("b", p, "b", "initial_shard_count = 2", "depends_on = [redisstreamcoordinator_group.a]")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ExpectError: regexp.MustCompile(`(?s)REDIS_STREAM_PROVISIONING_FAILED.*` + words(`other groups ("a" (2 shards))`) +
					".*" + words("live streams and must stay") + ".*" + words("safe to retry")),
			},
			{Config: config, Check: a.expectGroup(p, "b", shardCountIs(2))},
		},
	})
	for _, e := range a.diags.Errors() {
		if strings.Contains(e, "UNLINK") || strings.Contains(e, " DEL ") {
			t.Fatalf("the advice names a command that removes the first group's live streams:\n%s", e)
		}
	}
	if keys := c.RedisKeys(p); len(keys) != 2 {
		t.Fatalf("the first group's streams: want 2 keys, got %v", keys)
	}
}

// TestAccGroup_provisioningFailureOfFirstGroupPlannedUnknown: the first group
// of a prefix, planned with a provider configuration unknown at plan time
// (no sibling basis), fails provisioning. It is told what it was: the first
// group, whose keys block a retry, not that a retry is safe.
func TestAccGroup_provisioningFailureOfFirstGroupPlannedUnknown(t *testing.T) {
	a := newAccTest(t, acctest.Options{StreamProvisioning: true})
	c := a.env.RequireInRepo(t, "fails stream provisioning of the first group")
	p := acctest.RandomName("provunk")
	c.FailProvisioning(coordinator.ProvisioningFault{StreamPrefix: p, Operation: coordinator.ProvisionCreate, AfterShards: 1})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.providerConfigUnknownAtPlan() + groupHCL("test", p, "svc", "initial_shard_count = 2"),
			ExpectError: regexp.MustCompile(`(?s)REDIS_STREAM_PROVISIONING_FAILED.*` + words("first group") + ".*" + words("did not re-send") +
				".*" + words("redis-cli UNLINK "+p)),
		}},
	})
	for _, e := range a.diags.Errors() {
		if strings.Contains(e, "safe to retry") {
			t.Fatalf("the first group's failure is called safe to retry:\n%s", e)
		}
	}
}
