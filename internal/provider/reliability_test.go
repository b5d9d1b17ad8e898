package provider

// The reliability suite: applies that meet the failures a production
// coordinator produces (rate-limit storms, 503 bursts, restarts, slow or
// malformed answers, proxies, TLS), injected through the in-repo
// coordinator's hooks. Cases covered elsewhere and not repeated here:
// TestAccGroup_lostCreateResponseIsAdopted, TestAccGroup_createResentAfter-
// ConnectionLostBeforeApply, TestAccGroupShardCount_lostScaleResponseIsAdopted,
// TestAccGroupShardCount_rateLimitStormRetriedWithOneRequestID and
// TestAccGroupShardCount_transientErrorsRetried.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// reliabilityGroups is the workload of the apply-level cases: n groups, each
// under its own stream prefix base-i, created with 4 shards and scaled in to
// 2 by a shard-count resource (a scale-in completes without consumers).
func reliabilityGroups(base string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("%s-%d", base, i)
		b.WriteString(groupHCL(fmt.Sprintf("g%d", i), p, "svc", "initial_shard_count = 4"))
		b.WriteString(shardCountHCL(fmt.Sprintf("s%d", i), p, "svc", 2, fmt.Sprintf("depends_on = [redisstreamcoordinator_group.g%d]", i)))
	}
	return b.String()
}

// withEndpoint is the test's environment reached through another URL (a
// proxy or a TLS listener in front of the same coordinator).
func (a *accTest) withEndpoint(url string) *acctest.Env {
	e := *a.env
	e.Endpoint = url
	return &e
}

// terraformAttempts groups the audited attempts of the provider's own
// requests (ids "terraform-…") for stream prefixes starting with base, by
// request id, in order.
func terraformAttempts(c *coordinator.Coordinator, base string) map[string][]coordinator.AuditEvent {
	out := map[string][]coordinator.AuditEvent{}
	for _, e := range c.AuditEvents() {
		if strings.HasPrefix(e.StreamPrefix, base+"-") && strings.HasPrefix(e.RequestID, "terraform-") {
			out[e.RequestID] = append(out[e.RequestID], e)
		}
	}
	return out
}

// stormProxy fronts the coordinator's handler with the rate limit at one
// mutation per window, windows that never lapse by themselves
// (RateLimitManualReset). Before each of the provider's mutations it ends
// the windows of that stream prefix. Then, until the provider has been
// refused `storms` times on a request id, it spends that request's bucket
// (principal, prefix, group) with a request of its own that changes nothing,
// so the coordinator's real limiter answers the provider 429 with
// Retry-After, and audits it; afterwards the provider's attempt opens a
// fresh window and passes. No window can lapse in between, so the storm is
// independent of timing. Each prefix's mutations are sequential (the scale
// depends on the create), so resetting one prefix never disturbs another.
type stormProxy struct {
	coord  *coordinator.Coordinator
	next   http.Handler
	storms int

	mu      sync.Mutex
	refused map[string]int
	spends  int
}

func newStormProxy(c *coordinator.Coordinator, storms int) *stormProxy {
	return &stormProxy{coord: c, next: c.Handler(), storms: storms, refused: map[string]int{}}
}

func (s *stormProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("X-Request-Id")
	if r.Method == http.MethodGet || !strings.HasPrefix(id, "terraform-") {
		s.next.ServeHTTP(w, r)
		return
	}
	s.mu.Lock()
	spend := s.refused[id] < s.storms
	s.mu.Unlock()
	prefix, _, _ := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/coord/v1/streams/"), "/")
	s.coord.ResetRateLimitsOf(prefix)
	if spend {
		s.spend(r)
	}
	rec := &statusRecorder{ResponseWriter: w}
	s.next.ServeHTTP(rec, r)
	if rec.status == http.StatusTooManyRequests {
		s.mu.Lock()
		s.refused[id]++
		s.mu.Unlock()
	}
}

// spend sends, as the same principal, a request in r's bucket that the
// coordinator counts but rejects as malformed (400): a DELETE of the group
// for group-scoped mutations, a stream create for stream scales. Both use a
// method or route the injected faults of the tests do not match.
func (s *stormProxy) spend(r *http.Request) {
	const api = "/coord/v1/streams/"
	segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), api), "/")
	method, path := http.MethodPost, api+segs[0]
	if len(segs) >= 3 && segs[1] == "groups" {
		method, path = http.MethodDelete, api+segs[0]+"/groups/"+segs[2]
	}
	s.mu.Lock()
	s.spends++
	n := s.spends
	s.mu.Unlock()
	req := httptest.NewRequest(method, path, strings.NewReader("{"))
	req.Header.Set("Authorization", r.Header.Get("Authorization"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", fmt.Sprintf("storm-spend-%d", n))
	s.next.ServeHTTP(httptest.NewRecorder(), req)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func TestAccReliability_rateLimitStormAnd503BurstsDuringApply(t *testing.T) {
	const groups, storms, bursts = 3, 2, 2
	a := newAccTest(t, acctest.Options{RateLimitPerWindow: 1, RateLimitWindow: time.Second, RateLimitManualReset: true})
	c := a.env.RequireInRepo(t, "spends rate-limit buckets, injects 503s and reads the audit log")
	proxy := newStormProxy(c, storms)
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	base := acctest.RandomName("storm")
	// 503 bursts on top of the storm: answered before the coordinator's
	// audit and limiter, so they show only in the request counts.
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultRespond, Times: bursts,
		Status: 503, ErrorCode: "COORDINATOR_TERMINATING", Message: "coordinator is terminating"})
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteStreamScale, Kind: coordinator.FaultRespond, Times: bursts,
		Status: 503, ErrorCode: "COORDINATOR_STATE_MUTEX_UNAVAILABLE", Message: "Could not acquire coordinator state mutex"})

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.withEndpoint(srv.URL).ProviderConfig() + reliabilityGroups(base, groups),
			Check: func(*terraform.State) error {
				for i := 0; i < groups; i++ {
					if err := a.migrationFinished(fmt.Sprintf("%s-%d", base, i), "svc", 2)(nil); err != nil {
						return err
					}
				}
				return checkOneRequestIDPerOperation(c, base, groups, storms)
			},
		}},
	})
	// Every refused attempt was sent again: the bursts plus, per logical
	// operation, the storm's refusals and the accepted attempt.
	if got, want := c.RequestCount("POST", coordinator.RouteGroup), bursts+groups*(storms+1); got != want {
		t.Errorf("group creates reaching the coordinator: %d, want %d (%d refused with 503, %d×(%d refused with 429 + 1 accepted))", got, want, bursts, groups, storms)
	}
	if got, want := c.RequestCount("POST", coordinator.RouteStreamScale), bursts+groups*(storms+1); got != want {
		t.Errorf("stream scales reaching the coordinator: %d, want %d", got, want)
	}
}

// checkOneRequestIDPerOperation groups the provider's audited attempts by
// request id: each id must be one logical operation (one action on one
// path), refused `storms` times with 429 and then accepted; and there must
// be exactly one id per group create and per stream scale.
func checkOneRequestIDPerOperation(c *coordinator.Coordinator, base string, groups, storms int) error {
	perAction := map[string][]string{}
	for id, attempts := range terraformAttempts(c, base) {
		first := attempts[0]
		for _, e := range attempts[1:] {
			if e.Action != first.Action || e.Path != first.Path {
				return fmt.Errorf("request id %s spans two operations: %s %s and %s %s", id, first.Action, first.Path, e.Action, e.Path)
			}
		}
		var statuses []string
		for _, e := range attempts {
			statuses = append(statuses, fmt.Sprint(e.Status))
		}
		refusals := strings.TrimSuffix(strings.Repeat("429,", storms), ",")
		last := attempts[len(attempts)-1]
		if len(attempts) != storms+1 || strings.Join(statuses[:storms], ",") != refusals || last.Outcome != coordinator.OutcomeSuccess {
			return fmt.Errorf("request id %s (%s %s): audited statuses %s, want %s then a success",
				id, first.Action, first.Path, strings.Join(statuses, ","), refusals)
		}
		perAction[first.Action] = append(perAction[first.Action], first.StreamPrefix)
	}
	for _, action := range []string{coordinator.ActionCreateGroup, coordinator.ActionScaleStream} {
		prefixes := perAction[action]
		sort.Strings(prefixes)
		var want []string
		for i := 0; i < groups; i++ {
			want = append(want, fmt.Sprintf("%s-%d", base, i))
		}
		if strings.Join(prefixes, " ") != strings.Join(want, " ") {
			return fmt.Errorf("%s request ids cover prefixes %v, want one per prefix %v", action, prefixes, want)
		}
	}
	if len(perAction) != 2 {
		return fmt.Errorf("unexpected audited actions: %v", perAction)
	}
	return nil
}

func TestAccReliability_coordinatorRestartMidApply(t *testing.T) {
	const groups = 4
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "restarts the coordinator in the middle of an apply")
	base := acctest.RandomName("restart")
	// Hold the creates, and the first stream scale, until a restart has cut
	// their connections; the coordinator, like the real one, then applies
	// them anyway, and serves again only once they are applied, so they are
	// applied before the provider can look. The downtime is only as long as
	// applying them takes, well within the provider's retries.
	var createsCut, scaleCut atomic.Bool
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultDelay, Times: groups,
		Delay: time.Hour, Until: createsCut.Load})
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteStreamScale, Kind: coordinator.FaultDelay, Times: 1,
		Delay: time.Hour, Until: scaleCut.Load})
	audited := func(action string, n int) func() bool {
		return func() bool {
			count := 0
			for _, e := range c.AuditEvents() {
				if strings.HasPrefix(e.StreamPrefix, base+"-") && e.Action == action {
					count++
				}
			}
			return count >= n
		}
	}
	restarts := make(chan error, 1)
	config := a.env.ProviderConfig() + reliabilityGroups(base, groups)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					go func() {
						restarts <- restartWhen(c,
							restartPlan{
								arrived: func() bool { return c.RequestCount("POST", coordinator.RouteGroup) >= groups },
								cut:     &createsCut, applied: audited(coordinator.ActionCreateGroup, groups),
							},
							restartPlan{
								arrived: func() bool { return c.RequestCount("POST", coordinator.RouteStreamScale) >= 1 },
								cut:     &scaleCut, applied: audited(coordinator.ActionScaleStream, 1),
							})
					}()
				},
				Config: config,
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error {
						select {
						case err := <-restarts:
							return err
						case <-time.After(30 * time.Second):
							return fmt.Errorf("the coordinator was not restarted twice")
						}
					},
					// All four creates lost their responses and were adopted.
					func(*terraform.State) error {
						adopted := 0
						for _, w := range a.diags.Warnings() {
							if strings.Contains(w, "Adopted a group whose create response was lost") {
								adopted++
							}
						}
						if adopted != groups {
							return fmt.Errorf("%d groups were adopted after the restart, want %d", adopted, groups)
						}
						return nil
					},
					a.stateMatchesCoordinator(base),
				),
			},
			{
				// A second apply converges: nothing left to do.
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: a.stateMatchesCoordinator(base),
			},
		},
	})
	// Each group was created exactly once: adopted, not duplicated.
	creates := map[string]int{}
	for _, e := range c.AuditEvents() {
		if strings.HasPrefix(e.StreamPrefix, base+"-") && e.Action == coordinator.ActionCreateGroup {
			creates[e.StreamPrefix]++
		}
	}
	for i := 0; i < groups; i++ {
		if p := fmt.Sprintf("%s-%d", base, i); creates[p] != 1 {
			t.Errorf("group %s/svc: %d audited creates, want exactly one", p, creates[p])
		}
	}
}

// restartPlan is one restart of restartWhen: once arrived holds, the
// coordinator's connections are cut, cut is set (releasing held requests),
// and it serves again once applied holds.
type restartPlan struct {
	arrived func() bool
	cut     *atomic.Bool
	applied func() bool
}

// restartWhen restarts the coordinator (listener and connections closed,
// same port, state kept) once per plan, in order. The time limits only keep
// a broken test from hanging; nothing depends on them.
func restartWhen(c *coordinator.Coordinator, plans ...restartPlan) error {
	await := func(cond func() bool) bool {
		deadline := time.Now().Add(2 * time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(2 * time.Millisecond)
		}
		return true
	}
	for i, p := range plans {
		if !await(p.arrived) {
			return fmt.Errorf("restart %d: the requests to cut off never arrived", i+1)
		}
		var appliedErr error
		err := c.RestartWith(func() {
			p.cut.Store(true)
			if !await(p.applied) {
				appliedErr = fmt.Errorf("restart %d: the cut-off requests were never applied", i+1)
			}
		})
		if err = errors.Join(err, appliedErr); err != nil {
			return fmt.Errorf("restart %d: %w", i+1, err)
		}
	}
	return nil
}

// stateMatchesCoordinator is a step check: the groups under base that the
// coordinator has are exactly those in state, with the shard counts state
// claims.
func (a *accTest) stateMatchesCoordinator(base string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		inState := map[string]string{} // "p/g" → shard_count of the shard-count resource
		for _, rs := range s.RootModule().Resources {
			id := rs.Primary.Attributes["stream_prefix"] + "/" + rs.Primary.Attributes["consumer_group"]
			switch rs.Type {
			case "redisstreamcoordinator_group":
				if _, ok := inState[id]; !ok {
					inState[id] = ""
				}
			case "redisstreamcoordinator_group_shard_count":
				inState[id] = rs.Primary.Attributes["shard_count"]
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		groups, err := a.env.Client().Groups(ctx)
		if err != nil {
			return fmt.Errorf("listing the coordinator's groups: %w", err)
		}
		onServer := map[string]string{}
		for _, g := range groups {
			if strings.HasPrefix(g.StreamPrefix, base+"-") {
				onServer[g.StreamPrefix+"/"+g.ConsumerGroup] = fmt.Sprint(g.ShardCount)
			}
		}
		for id, count := range onServer {
			want, ok := inState[id]
			switch {
			case !ok:
				return fmt.Errorf("group %s exists on the coordinator but not in state", id)
			case want != "" && want != count:
				return fmt.Errorf("state claims %s shards for %s, the coordinator has %s", want, id, count)
			}
		}
		for id := range inState {
			if _, ok := onServer[id]; !ok {
				return fmt.Errorf("state claims group %s, which the coordinator lacks", id)
			}
		}
		return nil
	}
}
