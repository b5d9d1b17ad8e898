package client

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// TestMutationNotRetriedAfterAnInterruptDuringTheBackoff: an interrupt that
// arrives after the retry was decided, while the client waits to retry, still
// stops the mutation: the wait ends on the grace context, which outlives the
// operation, and nothing is sent after it. The client's clock is read after
// the retry decision's operation check, so the test interrupts there.
func TestMutationNotRetriedAfterAnInterruptDuringTheBackoff(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeCoordError(w, http.StatusServiceUnavailable, CodeCoordinatorStateMutexUnavailable, "busy")
	})
	c := newTestClient(t, f.URL, nil)
	op, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	c.now = func() time.Time {
		if f.count() > 0 {
			interrupt() // Ctrl-C once the first attempt is answered and its retry decided
		}
		return time.Now()
	}
	_, err := c.ScaleGroup(graceOf(op), "orders", "billing", 8, Mutation{})
	if !IsNotSent(err) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a NotSentError wrapping context.Canceled", err)
	}
	if got := f.count(); got != 1 {
		t.Fatalf("requests = %d, want 1: nothing sent after the interrupt", got)
	}
}

// TestMutationRetryBoundByItsOperationsDeadline: a mutation's retry waits
// against its operation's deadline (the resource timeout), not the later
// deadline of the grace context it is sent on.
func TestMutationRetryBoundByItsOperationsDeadline(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeCoordError(w, http.StatusServiceUnavailable, CodeCoordinatorStateMutexUnavailable, "busy")
	})
	c := newTestClient(t, f.URL, nil)
	opDeadline := time.Now().Add(time.Hour)
	op, cancel := context.WithDeadline(context.Background(), opDeadline)
	defer cancel()
	grace, cancelGrace := context.WithDeadline(graceOf(op), opDeadline.Add(6*time.Second))
	defer cancelGrace()
	// The clock stands a microsecond before the operation's deadline: any
	// retry wait is past it, while the grace context has 6 s left.
	c.now = func() time.Time { return opDeadline.Add(-time.Microsecond) }
	_, err := c.ScaleGroup(grace, "orders", "billing", 8, Mutation{})
	var de *DeadlineError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want a DeadlineError", err)
	}
	if got := f.count(); got != 1 {
		t.Fatalf("requests = %d, want 1: the retry would be past the operation's deadline", got)
	}
	// A read on the same context may use the grace.
	g := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			writeCoordError(w, http.StatusServiceUnavailable, CodeCoordinatorStateMutexUnavailable, "busy")
			return
		}
		writeJSON(w, http.StatusOK, groupJSON("orders", "billing", 4))
	})
	r := newTestClient(t, g.URL, nil)
	r.now = c.now
	if _, err := r.GetGroup(grace, "orders", "billing"); err != nil {
		t.Fatalf("read-back on the grace context: %v", err)
	}
}
