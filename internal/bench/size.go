package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// SizeResult holds the plan/refresh figures for one workspace size: N
// groups, each with a shard-count resource (2N resources), next to the
// same-shape do-nothing provider (2N resources) and the one-attribute
// do-nothing provider (2N noop_one resources).
type SizeResult struct {
	N int

	Plan     Stats // refreshing plan of the unchanged configuration
	Refresh  Stats // terraform plan -refresh-only
	NoopPlan Stats // same-shape floor
	// NoopRefresh is the same-shape floor's refresh-only plan.
	NoopRefresh Stats
	OnePlan     Stats // one-attribute floor
	// NoopApply is `terraform apply` of the unchanged configuration.
	NoopApply         Run
	NoopApplyRequests int

	PlanRSSKiB, NoopPlanRSSKiB, OnePlanRSSKiB int64
	// PlanCPU, NoopPlanCPU and OnePlanCPU split the processor time of one
	// refreshing plan (the median of the rounds) between terraform and the
	// provider processes.
	PlanCPU, NoopPlanCPU, OnePlanCPU CPUSplit
	PlanInstances                    int
	// PlanRequests is the coordinator's request count of one refreshing
	// plan; PlanGroupReads and PlanListings how many of them were
	// GET .../groups/{g} and GET /monitoring/groups; PlanCounts all of them
	// by route.
	PlanRequests, PlanGroupReads, PlanListings int
	PlanCounts                                 map[string]int
	// Seeded is how many groups were created through the API and written
	// into the state instead of being applied (see seed.go).
	Seeded int
	// LiteralShape: the shard counts named their groups literally (see
	// LiteralShapeFrom).
	LiteralShape bool
}

// Resources is how many resource instances the workspace holds.
func (r SizeResult) Resources() int { return 2 * r.N }

// MeasureSize seeds the three workspaces of size n and runs plans of each
// provider alternately (so drift in machine load affects them alike), then
// one no-op apply of the provider's. The coordinator has the rate limit on
// at the server's default (60 mutations per minute per principal, prefix and
// group), as a production one would.
func MeasureSize(ctx context.Context, tf *Terraform, n, plans int) (SizeResult, error) {
	res := SizeResult{N: n}
	c, err := startCoordinator(CoordinatorOptions{RateLimitPerWindow: 60, RateLimitWindow: time.Minute})
	if err != nil {
		return res, err
	}
	defer c.Close()

	shape := func(config string) string { return config }
	if n >= LiteralShapeFrom {
		shape, res.LiteralShape = literalShape, true
	}
	type ws struct {
		w      *Workspace
		config func(n int) string
		count  func(n int) int // instances per resource in the state
	}
	var all []ws
	for _, k := range []struct {
		name   string
		config func(int) string
		count  func(int) int
	}{
		{"provider", func(n int) string { return shape(groupsConfig(c.URL(), n, 4, 4, false)) }, func(n int) int { return n }},
		{"noop", func(n int) string { return shape(groupsConfig(c.URL(), n, 4, 4, true)) }, func(n int) int { return n }},
		{"one", func(n int) string { return oneConfig(c.URL(), 2*n) }, func(n int) int { return 2 * n }},
	} {
		w, err := tf.NewWorkspace(fmt.Sprintf("%s-%d", k.name, n))
		if err != nil {
			return res, err
		}
		all = append(all, ws{w, k.config, k.count})
	}
	ours, noop, one := all[0].w, all[1].w, all[2].w

	t := min(n, templateInstances)
	for _, x := range all {
		if err := x.w.WriteConfig(x.config(t)); err != nil {
			return res, err
		}
		if _, err := x.w.Apply(ctx); err != nil {
			return res, err
		}
	}
	if n > t {
		api, err := setupClient(c)
		if err != nil {
			return res, err
		}
		if err := createGroups(ctx, api, t, n); err != nil {
			return res, err
		}
		for _, x := range all {
			if err := expandState(x.w.Dir, x.count(n)); err != nil {
				return res, err
			}
			if err := x.w.WriteConfig(x.config(n)); err != nil {
				return res, err
			}
		}
		res.Seeded = n - t
	}

	var ourPlans, ourRefreshes, noopPlans, noopRefreshes, onePlans []time.Duration
	var ourCPU, noopCPU, oneCPU []CPUSplit
	for i := 0; i < plans; i++ {
		c.ResetRequestCounts()
		r, err := ours.Plan(ctx)
		if err != nil {
			return res, err
		}
		ourPlans = append(ourPlans, r.Wall)
		ourCPU = append(ourCPU, cpuSplit(r))
		res.PlanRSSKiB = max(res.PlanRSSKiB, r.PeakRSSKiB)
		res.PlanInstances = r.Instances
		res.PlanCounts = c.RequestCounts()
		res.PlanRequests = totalRequests(res.PlanCounts)
		res.PlanGroupReads = c.RequestCount("GET", coordinator.RouteGroup)
		res.PlanListings = c.RequestCount("GET", coordinator.RouteMonitoringGroups)

		if r, err = noop.Plan(ctx); err != nil {
			return res, err
		}
		noopPlans = append(noopPlans, r.Wall)
		noopCPU = append(noopCPU, cpuSplit(r))
		res.NoopPlanRSSKiB = max(res.NoopPlanRSSKiB, r.PeakRSSKiB)

		if r, err = one.Plan(ctx); err != nil {
			return res, err
		}
		onePlans = append(onePlans, r.Wall)
		oneCPU = append(oneCPU, cpuSplit(r))
		res.OnePlanRSSKiB = max(res.OnePlanRSSKiB, r.PeakRSSKiB)

		if r, err = ours.RefreshOnly(ctx); err != nil {
			return res, err
		}
		ourRefreshes = append(ourRefreshes, r.Wall)
		res.PlanRSSKiB = max(res.PlanRSSKiB, r.PeakRSSKiB)

		if r, err = noop.RefreshOnly(ctx); err != nil {
			return res, err
		}
		noopRefreshes = append(noopRefreshes, r.Wall)
	}
	res.Plan, res.Refresh, res.NoopPlan, res.NoopRefresh, res.OnePlan =
		statsOf(ourPlans), statsOf(ourRefreshes), statsOf(noopPlans), statsOf(noopRefreshes), statsOf(onePlans)
	res.PlanCPU, res.NoopPlanCPU, res.OnePlanCPU = medianCPU(ourCPU), medianCPU(noopCPU), medianCPU(oneCPU)

	c.ResetRequestCounts()
	if res.NoopApply, err = ours.Apply(ctx); err != nil {
		return res, err
	}
	if !strings.Contains(res.NoopApply.Output, "0 added, 0 changed, 0 destroyed") && !strings.Contains(res.NoopApply.Output, "No changes.") {
		return res, fmt.Errorf("apply of the unchanged configuration changed something:\n%s", tail(res.NoopApply.Output, 4000))
	}
	res.PlanRSSKiB = max(res.PlanRSSKiB, res.NoopApply.PeakRSSKiB)
	res.NoopApplyRequests = totalRequests(c.RequestCounts())
	return res, nil
}

// ApplyResult is creating N groups with their shard counts, then scaling
// every group in from 4 to 2 shards.
type ApplyResult struct {
	N            int
	Create       Run
	CreateCounts map[string]int // by "METHOD route"
	NoopCreate   Run            // the same-shape floor's create
	Update       Run
	UpdateCounts map[string]int
	Update429s   int
	// UpdateLastLatency is from the last migration turning DEPRECATED to
	// the apply returning.
	UpdateLastLatency time.Duration
}

// MeasureApply creates n groups + n shard counts at the default parallelism
// on a coordinator with the server's default rate limit, then scales them.
func MeasureApply(ctx context.Context, tf *Terraform, n int) (ApplyResult, error) {
	res := ApplyResult{N: n}
	c, err := startCoordinator(CoordinatorOptions{RateLimitPerWindow: 60, RateLimitWindow: time.Minute})
	if err != nil {
		return res, err
	}
	defer c.Close()
	ours, err := tf.NewWorkspace(fmt.Sprintf("apply-%d", n))
	if err != nil {
		return res, err
	}
	noop, err := tf.NewWorkspace(fmt.Sprintf("apply-noop-%d", n))
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
	res.CreateCounts = c.RequestCounts()
	if res.NoopCreate, err = noop.Apply(ctx); err != nil {
		return res, err
	}

	if err := ours.WriteConfig(groupsConfig(c.URL(), n, 4, 2, false)); err != nil {
		return res, err
	}
	c.ResetRequestCounts()
	auditBefore := len(c.AuditEvents())
	if res.Update, err = ours.Apply(ctx); err != nil {
		return res, err
	}
	res.UpdateCounts = c.RequestCounts()
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
