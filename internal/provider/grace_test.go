package provider

import (
	"context"
	"testing"
	"time"
)

func TestGraceContextOutlivesTheInterruptBriefly(t *testing.T) {
	// The grace period ends when the test says so: its timer is handed
	// over here instead of started.
	ends := make(chan func(), 1)
	old := graceAfter
	graceAfter = func(d time.Duration, end func()) {
		if d != cancelGrace {
			t.Errorf("grace period of %s, want cancelGrace (%s)", d, cancelGrace)
		}
		ends <- end
	}
	t.Cleanup(func() { graceAfter = old })

	type key struct{}
	parent, cancel := context.WithTimeout(context.WithValue(context.Background(), key{}, "logger"), time.Hour)
	gctx, done := graceContext(parent, "test")
	defer done()
	if gctx.Value(key{}) != "logger" {
		t.Fatal("the grace context must carry the operation's values (its loggers)")
	}
	if d, ok := gctx.Deadline(); !ok || d.Before(time.Now().Add(59*time.Minute)) {
		t.Fatalf("the grace context keeps the operation's deadline, extended by the grace: %v %v", d, ok)
	}
	cancel() // the interrupt
	if !interrupted(parent) {
		t.Fatal("a cancelled operation counts as interrupted")
	}
	end := <-ends // the interrupt started the grace period
	if gctx.Err() != nil {
		t.Fatal("the request in flight must outlive the interrupt")
	}
	end() // the grace period runs out
	if gctx.Err() == nil {
		t.Fatal("the grace period must end the request's context")
	}

	// Released before any interrupt: nothing outlives the call.
	parent2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	gctx2, done2 := graceContext(parent2, "test")
	done2()
	if gctx2.Err() == nil {
		t.Fatal("done ends the grace context")
	}
}
