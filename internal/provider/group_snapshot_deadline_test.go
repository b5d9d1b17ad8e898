package provider

import (
	"context"
	"testing"
	"time"
)

// The shared listing is detached from its caller's cancellation, not from
// its deadline: inside a resource timeout it runs under that deadline (the
// client then does not apply read_timeout); outside one, under none.
func TestGroupListingKeepsTheCallersDeadline(t *testing.T) {
	f := newFakeGroups(3)
	r := newGroupReader(f)
	deadline := time.Now().Add(time.Hour)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if _, err := r.forPlan(ctx); err != nil {
		t.Fatal(err)
	}
	// A delete since: the next plan-time check lists afresh.
	r.noteMutation("p0")
	r.mu.Lock()
	r.lastDelete = r.seq
	r.mu.Unlock()
	if _, err := r.forPlan(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.listDeadlines) != 2 || !f.listDeadlines[0].Equal(deadline) || !f.listDeadlines[1].IsZero() {
		t.Fatalf("listing deadlines %v, want the caller's (%v), then none", f.listDeadlines, deadline)
	}
}
