package provider

import (
	"context"
	"testing"
	"time"
)

func TestGraceContextOutlivesTheInterruptBriefly(t *testing.T) {
	old := cancelGrace
	cancelGrace = 50 * time.Millisecond
	t.Cleanup(func() { cancelGrace = old })

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
	if gctx.Err() != nil {
		t.Fatal("the request in flight must outlive the interrupt")
	}
	select {
	case <-gctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the grace period must end")
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
