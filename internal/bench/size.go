package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// SizeResult holds the figures for one workspace size: N groups, each with
// a shard-count resource (2N resources).
type SizeResult struct {
	N int

	Create         Run // apply creating the 2N resources
	CreateRequests int
	// CreateListings counts the requests among them that list every group
	// (GET /monitoring/groups), whose answers grow with N.
	CreateListings int

	Plan          Stats // refreshing plan of the unchanged configuration
	PlanRSSKiB    int64
	PlanInstances int
	// PlanRequests is the coordinator's request count of one plan;
	// PlanGroupReads how many of them were GET .../groups/{g}.
	PlanRequests, PlanGroupReads int

	NoopCreate     Run
	NoopPlan       Stats
	NoopPlanRSSKiB int64

	Update         Run // apply scaling every group in from 4 to 2 shards
	UpdateRequests int
	UpdateListings int
	Update429s     int
	// UpdateLastLatency is from the last migration turning DEPRECATED to
	// the apply returning.
	UpdateLastLatency time.Duration
}

// Resources is how many resource instances the workspace holds.
func (r SizeResult) Resources() int { return 2 * r.N }

// MeasureSize runs the plan and apply measurements for n groups, and the
// same plans against the do-nothing provider's workspace of the same shape.
// The coordinator has the rate limit on at the server's default (60
// mutations per minute per principal, prefix and group), as a production one
// would.
func MeasureSize(ctx context.Context, tf *Terraform, n, plans int) (SizeResult, error) {
	res := SizeResult{N: n}
	c, err := startCoordinator(CoordinatorOptions{RateLimitPerWindow: 60, RateLimitWindow: time.Minute})
	if err != nil {
		return res, err
	}
	defer c.Close()

	ours, err := tf.NewWorkspace(fmt.Sprintf("provider-%d", n))
	if err != nil {
		return res, err
	}
	noop, err := tf.NewWorkspace(fmt.Sprintf("noop-%d", n))
	if err != nil {
		return res, err
	}
	if err := ours.WriteConfig(groupsConfig(c.URL(), n, 4, 4, false)); err != nil {
		return res, err
	}
	if err := noop.WriteConfig(groupsConfig(c.URL(), n, 4, 4, true)); err != nil {
		return res, err
	}

	c.ResetRequestCounts()
	if res.Create, err = ours.Apply(ctx); err != nil {
		return res, err
	}
	res.CreateRequests = totalRequests(c.RequestCounts())
	res.CreateListings = c.RequestCount("GET", coordinator.RouteMonitoringGroups)
	if res.NoopCreate, err = noop.Apply(ctx); err != nil {
		return res, err
	}

	// Alternate the two providers' plans so drift in machine load affects
	// both alike.
	var ourWalls, noopWalls []time.Duration
	for i := 0; i < plans; i++ {
		c.ResetRequestCounts()
		r, err := ours.Plan(ctx)
		if err != nil {
			return res, err
		}
		ourWalls = append(ourWalls, r.Wall)
		res.PlanRSSKiB = max(res.PlanRSSKiB, r.PeakRSSKiB)
		res.PlanInstances = r.Instances
		res.PlanRequests = totalRequests(c.RequestCounts())
		res.PlanGroupReads = c.RequestCount("GET", coordinator.RouteGroup)

		r, err = noop.Plan(ctx)
		if err != nil {
			return res, err
		}
		noopWalls = append(noopWalls, r.Wall)
		res.NoopPlanRSSKiB = max(res.NoopPlanRSSKiB, r.PeakRSSKiB)
	}
	res.Plan, res.NoopPlan = statsOf(ourWalls), statsOf(noopWalls)

	if err := ours.WriteConfig(groupsConfig(c.URL(), n, 4, 2, false)); err != nil {
		return res, err
	}
	c.ResetRequestCounts()
	auditBefore := len(c.AuditEvents())
	if res.Update, err = ours.Apply(ctx); err != nil {
		return res, err
	}
	res.UpdateRequests = totalRequests(c.RequestCounts())
	res.UpdateListings = c.RequestCount("GET", coordinator.RouteMonitoringGroups)
	for _, e := range c.AuditEvents()[auditBefore:] {
		if e.Status == 429 {
			res.Update429s++
		}
	}
	api, err := setupClient(c)
	if err != nil {
		return res, err
	}
	var last time.Time
	for i := 0; i < n; i++ {
		m, err := finishedMigration(ctx, api, prefixName(i), "svc", 2)
		if err != nil {
			return res, err
		}
		if m.UpdatedAt.After(last) {
			last = m.UpdatedAt.Time
		}
	}
	res.UpdateLastLatency = res.Update.End.Sub(last)
	return res, nil
}
