package provider

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// The shared listing rule (group_listing_shared.go), one case per clause:
// an executor's first reading of a prefix is a listing issued after it
// asked. Without the waits' poll it lists at once; with it, it takes the
// next listing issued (joined in flight), never one done before it asked,
// and lists for itself when none comes within joinWait or the one that
// came was stopped; a round that failed fails it (one retry layer).
func TestRecentGroupsTakesOnlyAListingIssuedAfterItAsked(t *testing.T) {
	ctx := context.Background()
	f := newFakeGroups(3)
	r := newGroupReader(f)
	r.joinWait = time.Hour // a case that must not wait for it fails by timeout
	listings := func() int { f.mu.Lock(); defer f.mu.Unlock(); return f.listings }
	awaiting := func() int { r.mu.Lock(); defer r.mu.Unlock(); return r.awaitingRound }
	hold := func() chan struct{} {
		h := make(chan struct{})
		f.mu.Lock()
		f.hold = h
		f.mu.Unlock()
		return h
	}
	release := func(h chan struct{}) {
		f.mu.Lock()
		f.hold = nil
		f.mu.Unlock()
		close(h)
	}

	// No poll: the reading lists at once, even right after another listing.
	if _, err := r.listGroups(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.recentGroups(ctx, false); err != nil || listings() != 2 {
		t.Fatalf("reading without the poll: %v, %d listings, want its own (2)", err, listings())
	}

	// With the poll: a listing done before it asked is not taken; the next
	// one issued (the poll's round), still in flight, is joined.
	got := make(chan error, 2)
	for range 2 {
		go func() { _, err := r.recentGroups(ctx, true); got <- err }()
	}
	waitFor(t, func() bool { return awaiting() == 2 }) // neither has listed
	h := hold()
	round := make(chan error, 1)
	go func() {
		_, err := r.listGroupsWith(ctx, func(ctx context.Context) ([]client.Group, error) { return f.GroupsFor(ctx, waitGroupsOperation) })
		round <- err
	}()
	waitFor(t, func() bool { return listings() == 3 })
	release(h)
	if err := <-round; err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-got; err != nil {
			t.Fatal(err)
		}
	}
	if listings() != 3 {
		t.Fatalf("%d listings, want the poll's round shared by both readings (3)", listings())
	}

	// A listing done before the reading asked is not taken, however
	// recent: with no round coming within joinWait, its own listing.
	r.joinWait = 10 * time.Millisecond
	if _, err := r.recentGroups(ctx, true); err != nil || listings() != 4 {
		t.Fatalf("reading after a listing done before it asked: %v, %d listings, want its own (4)", err, listings())
	}

	// A round that failed (after the client's retries) fails the reading:
	// no listing of its own, which would ride out the outage again.
	r.joinWait = time.Hour
	reading := make(chan error, 1)
	go func() { _, err := r.recentGroups(ctx, true); reading <- err }()
	waitFor(t, func() bool { return awaiting() == 1 })
	h = hold()
	go func() { _, err := r.listGroups(ctx); round <- err }()
	waitFor(t, func() bool { return listings() == 5 && r.waitingReads() == 1 })
	f.mu.Lock()
	f.listErr = errors.New("503")
	f.mu.Unlock()
	close(h)
	if err := <-round; err == nil {
		t.Fatal("the round meant to fail succeeded")
	}
	if err := <-reading; err == nil || err.Error() != "503" || listings() != 5 {
		t.Fatalf("reading after a failed round: %v, %d listings, want the round's error and no listing of its own (5)", err, listings())
	}
	f.mu.Lock()
	f.listErr = nil
	f.mu.Unlock()

	// A round that was stopped (its waits ended) is not taken: its own
	// listing.
	go func() { _, err := r.recentGroups(ctx, true); reading <- err }()
	waitFor(t, func() bool { return awaiting() == 1 })
	h = hold()
	stopped, stop := context.WithCancel(ctx)
	go func() {
		_, err := r.listGroupsWith(stopped, func(ctx context.Context) ([]client.Group, error) {
			_, _ = f.GroupsFor(ctx, waitGroupsOperation)
			return nil, ctx.Err()
		})
		round <- err
	}()
	waitFor(t, func() bool { return listings() == 6 && r.waitingReads() == 1 })
	stop()
	close(h)
	if err := <-round; !errors.Is(err, context.Canceled) {
		t.Fatalf("the stopped round: %v, want context.Canceled", err)
	}
	if err := <-reading; err != nil || listings() != 7 {
		t.Fatalf("reading after a stopped round: %v, %d listings, want its own (7)", err, listings())
	}
}
