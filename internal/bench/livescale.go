package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// LiveScaleResult is one apply that scales N prefixes out (4→8 shards),
// each group with a live consumer, at the default parallelism (10).
type LiveScaleResult struct {
	N     int
	Apply Run
	// Window is the time from Terraform's first scale request to the last
	// migration turning DEPRECATED; WindowCounts are Terraform's requests in
	// it, by "METHOD route" (the consumers' heartbeats are not Terraform's).
	Window       time.Duration
	WindowCounts map[string]int
	// ApplyCounts are all of the apply's requests.
	ApplyCounts map[string]int
	// LastLatency is from the last migration turning DEPRECATED to the
	// apply returning.
	LastLatency time.Duration
}

// liveScaleFrom and liveScaleTo: a scale-out, which completes only once the
// group's consumer has taken over the new assignment.
const liveScaleFrom, liveScaleTo = 4, 8

// MeasureLiveScale creates n groups with their shard counts, starts one
// fake consumer per group and waits until each owns its shards, then
// applies a scale-out of every prefix and reads which requests Terraform
// sent between its first scale and the last completion.
func MeasureLiveScale(ctx context.Context, tf *Terraform, n int) (LiveScaleResult, error) {
	res := LiveScaleResult{N: n}
	c, err := startCoordinator(CoordinatorOptions{})
	if err != nil {
		return res, err
	}
	defer c.Close()
	// Terraform talks to the coordinator through a second listener that
	// logs each request's arrival; the consumers use the coordinator's own.
	log := &requestLog{next: c.Handler()}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return res, err
	}
	srv := &http.Server{Handler: log, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	endpoint := "http://" + ln.Addr().String()

	ws, err := tf.NewWorkspace(fmt.Sprintf("live-scale-%d", n))
	if err != nil {
		return res, err
	}
	if err := ws.WriteConfig(groupsConfig(endpoint, n, liveScaleFrom, liveScaleFrom, false)); err != nil {
		return res, err
	}
	if _, err := ws.Apply(ctx); err != nil {
		return res, err
	}
	api, err := setupClient(c)
	if err != nil {
		return res, err
	}
	cctx, stopConsumers := context.WithCancel(ctx)
	var consumers sync.WaitGroup
	defer func() { stopConsumers(); consumers.Wait() }()
	for i := 0; i < n; i++ {
		m := &benchConsumer{api: api, p: prefixName(i), g: "svc", id: fmt.Sprintf("bench-member-%04d", i)}
		consumers.Add(1)
		go func() { defer consumers.Done(); m.run(cctx) }()
	}
	if err := waitConverged(ctx, api, n); err != nil {
		return res, err
	}

	if err := ws.WriteConfig(groupsConfig(endpoint, n, liveScaleFrom, liveScaleTo, false)); err != nil {
		return res, err
	}
	log.reset()
	if res.Apply, err = ws.Apply(ctx); err != nil {
		return res, err
	}
	entries := log.entries()
	var last time.Time
	for i := 0; i < n; i++ {
		m, err := finishedMigration(ctx, api, prefixName(i), "svc", liveScaleTo)
		if err != nil {
			return res, err
		}
		if m.UpdatedAt.After(last) {
			last = m.UpdatedAt.Time
		}
	}
	res.LastLatency = res.Apply.End.Sub(last)
	res.ApplyCounts, res.WindowCounts = map[string]int{}, map[string]int{}
	var first time.Time
	for _, e := range entries {
		res.ApplyCounts[e.key]++
		if first.IsZero() && e.key == "POST "+coordinator.RouteStreamScale {
			first = e.at
		}
		if !first.IsZero() && !e.at.After(last) {
			res.WindowCounts[e.key]++
		}
	}
	if first.IsZero() {
		return res, errors.New("the apply sent no stream scale")
	}
	res.Window = last.Sub(first)
	return res, nil
}

// waitConverged waits until every group is STABLE with its consumer owning
// every shard, so the scale starts from a settled prefix.
func waitConverged(ctx context.Context, api *client.Client, n int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		groups, err := api.Groups(ctx)
		if err != nil {
			return err
		}
		ready := 0
		for _, g := range groups {
			if g.State == client.GroupStable && sumOf(g.CurrentAssignmentSummary) == liveScaleFrom {
				ready++
			}
		}
		if ready == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("consumers converged in %d of %d groups after 2 minutes", ready, n)
		}
		if err := client.Sleep(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

func sumOf(m map[string]int32) int32 {
	var n int32
	for _, v := range m {
		n += v
	}
	return n
}

// benchConsumer is a fake member (CONTRACT §6): it joins, then echoes the
// last answer's epochs and assigned shards at the heartbeat interval the
// coordinator hands out (3 s by default), as a real consumer would.
type benchConsumer struct {
	api      *client.Client
	p, g, id string
}

func (m *benchConsumer) run(ctx context.Context) {
	var epoch, meta int64
	var owned []client.ShardID
	for {
		interval := 200 * time.Millisecond
		resp, err := m.api.Heartbeat(ctx, m.p, m.g, client.HeartbeatRequest{
			MemberID: m.id, MemberName: "bench-consumer", MemberEpoch: epoch, MetadataVersion: meta, OwnedShards: owned,
			RuntimeConsumerCapacity: client.RuntimeConsumerCapacity{RuntimeMaxConcurrency: 8, AvailableConcurrency: 8},
		})
		if err == nil {
			switch resp.Status {
			case client.HeartbeatUnknownMemberID, client.HeartbeatFencedMemberEpoch, client.HeartbeatInvalidRequest:
				epoch, meta, owned = 0, 0, nil
			default:
				epoch, meta = resp.MemberEpoch, resp.MetadataVersion
				if resp.Status != client.HeartbeatSyncMetadata {
					owned = append([]client.ShardID(nil), resp.Assignment.AssignedShards...)
				}
			}
			if d := time.Duration(resp.HeartbeatIntervalMs) * time.Millisecond; d > 0 && d <= 3*time.Second {
				interval = d
			} else {
				interval = 3 * time.Second
			}
		}
		if client.Sleep(ctx, interval) != nil {
			return
		}
	}
}

// requestLog records when each request reached the coordinator, keyed as
// the coordinator's own counts are ("METHOD route").
type requestLog struct {
	next http.Handler
	mu   sync.Mutex
	log  []loggedRequest
}

type loggedRequest struct {
	at  time.Time
	key string
}

func (l *requestLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e := loggedRequest{at: time.Now(), key: r.Method + " " + routeOf(r.URL.EscapedPath())}
	l.mu.Lock()
	l.log = append(l.log, e)
	l.mu.Unlock()
	l.next.ServeHTTP(w, r)
}

func (l *requestLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.log = nil
}

func (l *requestLog) entries() []loggedRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loggedRequest(nil), l.log...)
}

// routeOf names a request path by the coordinator's route pattern: the
// segment after streams/, groups/, migrations/ and members/ is a variable.
func routeOf(path string) string {
	vars := map[string]string{"streams": "{streamPrefix}", "groups": "{consumerGroup}", "migrations": "{reshardingId}", "members": "{memberId}"}
	segs := strings.Split(path, "/")
	for i := 1; i < len(segs)-1; i++ {
		if v, ok := vars[segs[i]]; ok && (segs[i] != "groups" || segs[i-1] != "monitoring") {
			segs[i+1] = v
			i++
		}
	}
	return strings.Join(segs, "/")
}
