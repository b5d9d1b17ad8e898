package provider

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

func TestAccGroupShardCount_rateLimitStormRetriedWithOneRequestID(t *testing.T) {
	// One admin mutation per window per principal and prefix bucket, and a
	// window that never lapses by itself: the provider's scale after the
	// out-of-band one is refused with 429 and Retry-After however slow the
	// machine is. The coordinator ends the window right after that first
	// refusal, so the provider's retry (same request id) gets through.
	a := newAccTest(t, acctest.Options{RateLimitPerWindow: 1, RateLimitWindow: 2 * time.Second, RateLimitManualReset: true})
	c := a.env.RequireInRepo(t, "configures a low rate limit and reads the audit log")
	p, g := acctest.RandomName("limited"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					scaleOutOfBand(t, a, p, 4) // a noop that uses the window's one mutation
					c.ResetRateLimitsAfterRefusals(1)
				},
				Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 3),
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, g, 3),
					func(*terraform.State) error {
						// 429s are audited without a body, so pick ours by request id.
						var ours []coordinator.AuditEvent
						for _, e := range auditEvents(c, p, "SCALE_STREAM") {
							if strings.HasPrefix(e.RequestID, "terraform-") {
								ours = append(ours, e)
							}
						}
						if len(ours) < 2 || ours[0].Status != 429 {
							return fmt.Errorf("want at least one 429 before success, got %+v", ours)
						}
						for _, e := range ours {
							if e.RequestID != ours[0].RequestID {
								return fmt.Errorf("429 retries must share one request id: %q vs %q", e.RequestID, ours[0].RequestID)
							}
						}
						if last := ours[len(ours)-1]; last.Outcome != "SUCCESS" || deref(last.Reason) == "<nil>" {
							return fmt.Errorf("last attempt: %+v", last)
						}
						return nil
					},
				),
			},
		},
	})
}

func TestAccGroupShardCount_transientErrorsRetried(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "injects transient 503 and 409 answers")
	p, g := acctest.RandomName("flaky"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	for _, f := range []coordinator.Fault{
		{Status: 503, ErrorCode: "COORDINATOR_STATE_MUTEX_UNAVAILABLE", Message: "Could not acquire coordinator state mutex"},
		{Status: 409, ErrorCode: "STATE_VERSION_CONFLICT", Message: "state revision conflict"},
		{Status: 503, ErrorCode: "COORDINATOR_TERMINATING", Message: "coordinator is terminating"},
		{Status: 429, ErrorCode: "RATE_LIMIT_EXCEEDED", Message: "Coordinator API rate limit exceeded", RetryAfter: "1"},
	} {
		f.Method, f.Route, f.Kind = "POST", coordinator.RouteStreamScale, coordinator.FaultRespond
		c.InjectFault(f)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 2),
			Check:  a.migrationFinished(p, g, 2),
		}},
	})
	if n := c.RequestCount("POST", coordinator.RouteStreamScale); n != 5 {
		t.Fatalf("want 4 refused attempts and 1 accepted, the coordinator saw %d scale requests", n)
	}
}

func TestAccGroupShardCount_lostScaleResponseIsAdopted(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "drops the 202 after applying the scale")
	p, g := acctest.RandomName("lost202"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	c.SetUndrainedShard(p, g, 3, true) // keep the migration active across the retry
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteStreamScale, Kind: coordinator.FaultResetAfterApply})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			PreConfig:         func() { go drainOnceWaiting(t, c, p, g, 3) },
			Config:            a.env.ProviderConfig() + shardCountHCL("test", p, g, 3),
			ConfigStateChecks: expectShardCountState(3, "DEPRECATED"),
			Check: resource.ComposeTestCheckFunc(
				a.migrationFinished(p, g, 3),
				a.diags.ExpectWarning("Took over the resharding", "adopted migration"),
				// The applied scale only: its lost answer is read back, not re-sent (issue 20).
				func(*terraform.State) error {
					events := auditEvents(c, p, "SCALE_STREAM")
					if len(events) != 1 || events[0].Outcome != "SUCCESS" {
						return fmt.Errorf("want the applied scale only, no re-send; got %+v", events)
					}
					return nil
				},
			),
		}},
	})
}
