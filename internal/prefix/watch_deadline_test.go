package prefix

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// deadlineReader records the deadline each listing is read under.
type deadlineReader struct {
	Reader
	mu        sync.Mutex
	deadlines []time.Time // zero: none
}

func (r *deadlineReader) Groups(ctx context.Context) ([]client.Group, error) {
	d, _ := ctx.Deadline()
	r.mu.Lock()
	r.deadlines = append(r.deadlines, d)
	r.mu.Unlock()
	return r.Reader.Groups(ctx)
}

// A round's listing runs under the latest deadline of the waits it serves
// (their resource timeouts), not under none (which the client would bound
// by read_timeout instead); with a wait that has no deadline, under none.
func TestWatcherListingTakesTheWaitsDeadline(t *testing.T) {
	e := newWatchEnv(t)
	rec := &deadlineReader{Reader: e.api}
	w := NewWatcher(rec, Options{Clock: Clock{Now: e.clock.Now, Sleep: e.clock.Sleep}})
	early, late := time.Now().Add(time.Hour), time.Now().Add(2*time.Hour)
	ctxA, cancelA := context.WithDeadline(context.Background(), early)
	defer cancelA()
	ctxB, cancelB := context.WithDeadline(context.Background(), late)
	defer cancelB()
	a := w.Watch(ctxA, "da", e.scaled(t, "da", 2, "g0"))
	b := w.Watch(ctxB, "db", e.scaled(t, "db", 2, "g0"))
	e.clock.round()
	next(t, a)
	next(t, b)
	b.Close()
	c := w.Watch(context.Background(), "dc", e.scaled(t, "dc", 2, "g0"))
	defer c.Close()
	e.clock.round()
	next(t, a)
	next(t, c)
	a.Close()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.deadlines) != 2 || !rec.deadlines[0].Equal(late) || !rec.deadlines[1].IsZero() {
		t.Fatalf("listing deadlines %v, want the later wait's (%v), then none", rec.deadlines, late)
	}
}
