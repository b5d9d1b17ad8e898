package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// virtualTime is the clock of TestScaleWaitPace: the wait's sleeps advance
// it, and the coordinator's loop ticks once per virtual second from
// tickFrom on, so no test waits for real time.
type virtualTime struct {
	mu       sync.Mutex
	base     time.Time
	elapsed  time.Duration
	tickFrom time.Duration
	limit    time.Duration
	tick     func()
}

func (v *virtualTime) now() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.base.Add(v.elapsed)
}

func (v *virtualTime) since() time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.elapsed
}

var errVirtualTimeUp = errors.New("virtual time limit reached")

func (v *virtualTime) sleep(ctx context.Context, d time.Duration) error {
	v.mu.Lock()
	before := v.elapsed
	v.elapsed += d
	after := v.elapsed
	v.mu.Unlock()
	for s := before/time.Second + 1; s <= after/time.Second; s++ {
		if s*time.Second >= v.tickFrom {
			v.tick()
		}
	}
	if after > v.limit {
		return errVirtualTimeUp
	}
	return ctx.Err()
}

// TestScaleWaitPace: while a scale waits for its migrations, the reads it
// sends for the stream prefix never exceed pollPaceMax (3) in any one
// second, that is, under 4 requests per second per waiting prefix, with one
// group or several, through rounds with side reads and the final migration
// read; and the wait still ends once the coordinator completes the change.
func TestScaleWaitPace(t *testing.T) {
	for _, groups := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d groups", groups), func(t *testing.T) {
			ctx := context.Background()
			vt := &virtualTime{base: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), tickFrom: 6 * time.Second, limit: 10 * time.Minute}
			c := coordinator.New(coordinator.Options{AdminPassword: "pace-pass", Now: vt.now})
			vt.tick = c.Tick

			var mu sync.Mutex
			recording := false
			var sent []time.Duration
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				if recording {
					sent = append(sent, vt.since())
				}
				mu.Unlock()
				c.ServeHTTP(w, r)
			}))
			defer srv.Close()
			api, err := client.New(client.Config{Endpoint: srv.URL, Username: "admin", Password: "pace-pass"})
			if err != nil {
				t.Fatal(err)
			}

			const prefix = "pace"
			four := int32(4)
			for i := range groups {
				if _, err := api.CreateGroup(ctx, prefix, fmt.Sprintf("g%d", i), &four, client.Mutation{}); err != nil {
					t.Fatal(err)
				}
			}
			var diags diag.Diagnostics
			s := &scaler{api: api, locks: &keyedMutex{}, p: prefix, g: "g0", target: 2, diags: &diags, pace: &pacer{clock: &pollClock{now: vt.now, sleep: vt.sleep}}}
			out := s.start(ctx)
			if out == nil || diags.HasError() {
				t.Fatalf("scale did not start: %v", diags)
			}
			if len(out.migrations) != groups {
				t.Fatalf("tracking %d migrations, want one per group (%d)", len(out.migrations), groups)
			}

			mu.Lock()
			recording, start := true, vt.since()
			mu.Unlock()
			finished := s.wait(ctx, out)
			mu.Lock()
			recording = false
			mu.Unlock()

			if !finished || diags.HasError() {
				t.Fatalf("wait did not finish: finished=%v %v", finished, diags)
			}
			if out.state != client.MigrationDeprecated {
				t.Fatalf("migrations ended %s, want %s", out.state, client.MigrationDeprecated)
			}
			// Nothing completes before tickFrom, so the wait polled for
			// several seconds: enough rounds to include side reads.
			if waited := vt.since() - start; waited < vt.tickFrom-start {
				t.Fatalf("wait ended after %s of virtual time, before the coordinator could complete anything", waited)
			}
			if len(sent) < 2*pollPaceMax {
				t.Fatalf("only %d requests while waiting", len(sent))
			}
			busiest := 0
			for i := range sent {
				n := 0
				for j := i; j < len(sent) && sent[j]-sent[i] < time.Second; j++ {
					n++
				}
				busiest = max(busiest, n)
				if n > pollPaceMax {
					t.Fatalf("%d requests within one second from %s (all: %v)", n, sent[i], sent)
				}
			}
			t.Logf("%d requests over %s of virtual time, at most %d in any second", len(sent), sent[len(sent)-1]-sent[0], busiest)
		})
	}
}
