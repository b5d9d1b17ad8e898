package provider

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The shared listing rule (group_listing_shared.go), one case per clause:
// an executor's first reading of a prefix is served by the run's newest
// listing only when it was issued after the prefix's last noted mutation
// and less than sharedListingFreshFor ago; it joins one in flight; a failed
// one sends a listing of its own. Every listing the run sends becomes the
// newest.
func TestRecentGroupsSharesTheRunsNewestListing(t *testing.T) {
	ctx := context.Background()
	f := newFakeGroups(3)
	r := newGroupReader(f)
	now := time.Unix(1_700_000_000, 0)
	r.now = func() time.Time { return now }
	listings := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.listings }

	// Nothing to share yet: the first reading lists.
	if _, err := r.recentGroups(ctx, "p0"); err != nil || listings() != 1 {
		t.Fatalf("first reading: %v, %d listings, want 1", err, listings())
	}
	// A wait's listing (listGroups) is shared by the next first reading
	// of any prefix, within the freshness bound.
	if _, err := r.listGroups(ctx); err != nil {
		t.Fatal(err)
	}
	now = now.Add(sharedListingFreshFor - time.Millisecond)
	if gs, err := r.recentGroups(ctx, "p1"); err != nil || len(gs) != 3 || listings() != 2 {
		t.Fatalf("reading within %s: %v, %d groups, %d listings, want the shared one (2 listings)", sharedListingFreshFor, err, len(gs), listings())
	}
	// Too old: listed afresh.
	now = now.Add(time.Millisecond)
	if _, err := r.recentGroups(ctx, "p1"); err != nil || listings() != 3 {
		t.Fatalf("reading %s after the newest listing: %v, %d listings, want a fresh one (3)", sharedListingFreshFor, err, listings())
	}
	// A mutation of p0 noted after the newest listing was issued: p0's
	// reading lists afresh (and sees the change); p1's still shares.
	f.set("p0", "g", 8)
	r.noteMutation("p0")
	if _, err := r.recentGroups(ctx, "p1"); err != nil || listings() != 3 {
		t.Fatalf("p1 after p0's mutation: %v, %d listings, want the shared one (3)", err, listings())
	}
	gs, err := r.recentGroups(ctx, "p0")
	if err != nil || listings() != 4 {
		t.Fatalf("p0 after its mutation: %v, %d listings, want a fresh one (4)", err, listings())
	}
	for _, g := range gs {
		if g.StreamPrefix == "p0" && g.ShardCount != 8 {
			t.Fatalf("p0's reading after its mutation shows %d shards, want the mutation's 8", g.ShardCount)
		}
	}

	// In flight: readings join it instead of sending their own.
	hold := make(chan struct{})
	f.mu.Lock()
	f.hold = hold
	f.mu.Unlock()
	done := make(chan error, 1)
	go func() { _, err := r.listGroups(ctx); done <- err }()
	waitFor(t, func() bool { return listings() == 5 })
	joined := make(chan error, 2)
	for _, p := range []string{"p1", "p2"} {
		go func() { _, err := r.recentGroups(ctx, p); joined <- err }()
	}
	waitFor(t, func() bool { return r.waitingReads() == 2 })
	f.mu.Lock()
	f.hold = nil
	f.mu.Unlock()
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-joined; err != nil {
			t.Fatal(err)
		}
	}
	if listings() != 5 {
		t.Fatalf("%d listings, want the one in flight shared by both readings (5)", listings())
	}

	// A failed newest listing is not shared: the reading lists for itself.
	f.mu.Lock()
	f.listErr = errors.New("503")
	f.mu.Unlock()
	if _, err := r.listGroups(ctx); err == nil {
		t.Fatal("the failing listing succeeded")
	}
	f.mu.Lock()
	f.listErr = nil
	f.mu.Unlock()
	if _, err := r.recentGroups(ctx, "p1"); err != nil || listings() != 7 {
		t.Fatalf("reading after a failed listing: %v, %d listings, want its own (7)", err, listings())
	}
}
