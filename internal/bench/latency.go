package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// LatencyResult is the scale completion latency over several applies.
type LatencyResult struct {
	Runs int
	// Latency is from the migration turning DEPRECATED to the apply
	// returning; Migration is the coordinator's own time from accepting the
	// scale to DEPRECATED; Apply the whole apply.
	Latency, Migration, Apply Stats
}

// MeasureScaleLatency applies one shard-count change at a time (a scale-in
// by one shard, which completes without consumers) on a coordinator with the
// server's default 1 s loop tick, and measures how long the apply takes to
// notice completion.
func MeasureScaleLatency(ctx context.Context, tf *Terraform, runs int) (LatencyResult, error) {
	res := LatencyResult{Runs: runs}
	c, err := startCoordinator(CoordinatorOptions{})
	if err != nil {
		return res, err
	}
	defer c.Close()
	ws, err := tf.NewWorkspace("latency")
	if err != nil {
		return res, err
	}
	api, err := setupClient(c)
	if err != nil {
		return res, err
	}
	start := runs + 2
	if err := ws.WriteConfig(groupsConfig(c.URL(), 1, start, start, false)); err != nil {
		return res, err
	}
	if _, err := ws.Apply(ctx); err != nil {
		return res, err
	}
	var latency, migration, apply []time.Duration
	for i := 1; i <= runs; i++ {
		target := start - i
		if err := ws.WriteConfig(groupsConfig(c.URL(), 1, start, target, false)); err != nil {
			return res, err
		}
		r, err := ws.Apply(ctx)
		if err != nil {
			return res, err
		}
		m, err := finishedMigration(ctx, api, prefixName(0), "svc", int32(target))
		if err != nil {
			return res, err
		}
		latency = append(latency, r.End.Sub(m.UpdatedAt.Time))
		migration = append(migration, m.UpdatedAt.Sub(m.CreatedAt.Time))
		apply = append(apply, r.Wall)
	}
	res.Latency, res.Migration, res.Apply = statsOf(latency), statsOf(migration), statsOf(apply)
	return res, nil
}

// finishedMigration is the group's latest migration to target, which must be
// DEPRECATED: the apply claimed to have waited for it.
func finishedMigration(ctx context.Context, api *client.Client, p, g string, target int32) (client.Migration, error) {
	h, err := api.Migrations(ctx, p, g)
	if err != nil {
		return client.Migration{}, err
	}
	for i := len(h.Migrations) - 1; i >= 0; i-- {
		m := h.Migrations[i]
		if m.ToShardCount != target {
			continue
		}
		if m.State != client.MigrationDeprecated {
			return m, fmt.Errorf("%s/%s: apply returned while migration %s was %s", p, g, m.ReshardingID, m.State)
		}
		return m, nil
	}
	return client.Migration{}, fmt.Errorf("%s/%s: no migration to %d shards", p, g, target)
}
