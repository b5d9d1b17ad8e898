package provider

import (
	"context"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// The grace period has two phases after an interrupt: the answer is awaited
// until only the read-back's share is left, then the send context ends (the
// answer counts as lost) while the settling context lives on for the share.
func TestGraceContextOutlivesTheInterruptBriefly(t *testing.T) {
	// The phases end when the test says so: their timers are handed over
	// here instead of started.
	type timer struct {
		d   time.Duration
		end func()
	}
	timers := make(chan timer, 2)
	timing := settleTiming{cancelGrace: 10 * time.Second, readBackShare: 3 * time.Second,
		after: func(d time.Duration, end func()) { timers <- timer{d, end} }}

	type key struct{}
	parent, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, "logger"), time.Hour)
	gctx, done := timing.graceContext(parent, "test")
	defer done()
	send := prefix.SendContextOf(gctx)
	if gctx.Value(key{}) != "logger" || send.Value(key{}) != "logger" {
		t.Fatal("the grace context must carry the operation's values (its loggers)")
	}
	if d, ok := gctx.Deadline(); !ok || d.Before(time.Now().Add(59*time.Minute)) {
		t.Fatalf("the grace context keeps the operation's deadline, extended by the grace: %v %v", d, ok)
	}
	cancel() // the interrupt
	if !interrupted(parent) {
		t.Fatal("a cancelled operation counts as interrupted")
	}
	answer := <-timers // the interrupt started the wait for the answer
	if answer.d != 7*time.Second {
		t.Fatalf("the answer is awaited %s, want the grace less the read-back's share (7s)", answer.d)
	}
	if gctx.Err() != nil || send.Err() != nil {
		t.Fatal("the request in flight must outlive the interrupt")
	}
	answer.end() // the answer's share runs out
	if send.Err() == nil {
		t.Fatal("the send context must end once the answer's share has run out")
	}
	if gctx.Err() != nil {
		t.Fatal("the read-back's share must outlive the send")
	}
	readBack := <-timers
	if readBack.d != 3*time.Second {
		t.Fatalf("the read-back's share is %s, want 3s", readBack.d)
	}
	readBack.end() // the grace period runs out
	if gctx.Err() == nil {
		t.Fatal("the grace period must end the request's context")
	}

	// Released before any interrupt: nothing outlives the call.
	parent2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	gctx2, done2 := settleTiming{}.graceContext(parent2, "test")
	done2()
	if gctx2.Err() == nil || prefix.SendContextOf(gctx2).Err() == nil {
		t.Fatal("done ends the grace context")
	}
}

// The zero settleTiming is the defaults, and the read-back's share is never
// more than the grace.
func TestSettleTimingDefaults(t *testing.T) {
	var zero settleTiming
	if zero.grace() != defaultCancelGrace || zero.readBack() != defaultReadBackShare || zero.settleBound() != defaultCreateSettleBound {
		t.Fatalf("zero timing: %s %s %s", zero.grace(), zero.readBack(), zero.settleBound())
	}
	if got := (settleTiming{cancelGrace: time.Second, readBackShare: time.Minute}).readBack(); got != time.Second {
		t.Fatalf("read-back share %s beyond a 1s grace", got)
	}
}
