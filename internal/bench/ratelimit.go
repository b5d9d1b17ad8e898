package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// RateLimitResult is one run against a rate-limited coordinator.
type RateLimitResult struct {
	Name       string
	Mutations  int           // K: mutations that had to succeed
	Limit      int           // L: mutations per window, per bucket
	Window     time.Duration // the (shortened) window
	Workers    int
	Total      time.Duration
	Minimum    time.Duration // theoretical minimum for the workload
	Refused    int           // 429s the coordinator audited
	Failures   int
	FirstError string
}

// MeasureBucketRateLimit sends k mutations that all fall into one rate-limit
// bucket (principal, prefix, group) from `workers` concurrent callers, the
// way Terraform's default parallelism of 10 would, through the provider's own
// client with the provider's default retry settings (max_retries 10,
// Retry-After honoured). Each mutation is a per-group scale to the current
// count: a real, audited 202 that changes nothing.
//
// One bucket is needed because the coordinator limits per principal, prefix
// and group; a Terraform apply sends at most one or two mutations per bucket.
// With a fixed window that opens at the bucket's first request, k mutations
// need ceil(k/L) windows, so the minimum is (ceil(k/L)−1)·window.
func MeasureBucketRateLimit(ctx context.Context, k, limit int, window time.Duration, workers int) (RateLimitResult, error) {
	res := RateLimitResult{Name: "provider client, one bucket", Mutations: k, Limit: limit, Window: window, Workers: workers}
	res.Minimum = time.Duration((k+limit-1)/limit-1) * window
	c, err := startCoordinator(CoordinatorOptions{RateLimitPerWindow: limit, RateLimitWindow: window})
	if err != nil {
		return res, err
	}
	defer c.Close()
	setup, err := setupClient(c)
	if err != nil {
		return res, err
	}
	const p, g = "bench-limited", "svc"
	if _, err := setup.CreateGroup(ctx, p, g, int32p(4), client.Mutation{}); err != nil {
		return res, err
	}
	// The provider's defaults (provider_config.go): 10 retries, 1–30 s
	// backoff, 30 s per attempt.
	api, err := client.New(client.Config{
		Endpoint: c.URL(), Username: tfUser, Password: tfPassword, RunID: "bench",
		MaxRetries: client.DefaultMaxRetries, RetryWaitMin: client.DefaultRetryWaitMin,
		RetryWaitMax: client.DefaultRetryWaitMax, RequestTimeout: client.DefaultRequestTimeout,
	})
	if err != nil {
		return res, err
	}
	jobs := make(chan int, k)
	for i := 0; i < k; i++ {
		jobs <- i
	}
	close(jobs)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				_, err := api.ScaleGroup(ctx, p, g, 4, client.Mutation{})
				if err != nil {
					mu.Lock()
					res.Failures++
					if res.FirstError == "" {
						res.FirstError = err.Error()
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	res.Total = time.Since(start)
	res.Refused = refusedBy(c, tfUser)
	return res, nil
}

// MeasureReplaceRateLimit is the Terraform-level case: `terraform apply
// -replace` of k groups (deletion_policy DELETE) against a coordinator that
// allows one mutation per window. Each group's delete opens its bucket's
// window, so its create is refused with 429 and must wait for the next
// window: the minimum is one window.
func MeasureReplaceRateLimit(ctx context.Context, tf *Terraform, k int, window time.Duration) (RateLimitResult, error) {
	res := RateLimitResult{Name: "terraform apply -replace", Mutations: 2 * k, Limit: 1, Window: window, Workers: 10, Minimum: window}
	c, err := startCoordinator(CoordinatorOptions{RateLimitPerWindow: 1, RateLimitWindow: window})
	if err != nil {
		return res, err
	}
	defer c.Close()
	ws, err := tf.NewWorkspace("replace")
	if err != nil {
		return res, err
	}
	cfg := providerBlock(c.URL()) + fmt.Sprintf(`
resource "redisstreamcoordinator_group" "g" {
  count               = %d
  stream_prefix       = format("bench-%%04d", count.index)
  consumer_group      = "svc"
  initial_shard_count = 2
  deletion_policy     = "DELETE"
}
`, k)
	if err := ws.WriteConfig(cfg); err != nil {
		return res, err
	}
	if _, err := ws.Apply(ctx); err != nil {
		return res, err
	}
	// Let the creates' windows close, so the replace starts on fresh ones.
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	var args []string
	for i := 0; i < k; i++ {
		args = append(args, fmt.Sprintf("-replace=redisstreamcoordinator_group.g[%d]", i))
	}
	before := refusedBy(c, tfUser)
	r, err := ws.Apply(ctx, args...)
	if err != nil {
		res.Failures = 1
		res.FirstError = err.Error()
		return res, nil
	}
	res.Total = r.Wall
	res.Refused = refusedBy(c, tfUser) - before
	return res, nil
}

func refusedBy(c *coordinator.Coordinator, principal string) int {
	n := 0
	for _, e := range c.AuditEvents() {
		if e.Status == 429 && e.Principal == principal {
			n++
		}
	}
	return n
}

func int32p(v int32) *int32 { return &v }
