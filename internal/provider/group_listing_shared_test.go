package provider

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// The shared listing rule (group_listing_shared.go), one case per clause:
// an executor's first reading of a prefix is a listing issued after it
// asked. Without the waits' poll it lists at once; while the poll will
// issue another round, it takes the next listing issued (joined in
// flight), never one done before it asked. It lists for itself once the
// poll no longer will (or the backstop passes), or when the listing it
// joined was a stopped round or another executor's that failed; a round
// that failed fails it (one retry layer).
func TestRecentGroupsTakesOnlyAListingIssuedAfterItAsked(t *testing.T) {
	ctx := context.Background()
	f := newFakeGroups(3)
	r := newGroupReader(f)
	r.joinWait = time.Hour // a case that must not wait for it fails by timeout
	var pollRuns atomic.Bool
	pollRuns.Store(true)
	polling := pollRuns.Load
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
	round := func(ctx context.Context) error {
		_, err := r.listGroupsWith(ctx, true, func(ctx context.Context) ([]client.Group, error) {
			return f.GroupsFor(ctx, waitGroupsOperation)
		})
		return err
	}
	rounds := make(chan error, 1)

	// No poll: the reading lists at once, even right after another listing.
	if _, err := r.listGroups(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.recentGroups(ctx, nil); err != nil || listings() != 2 {
		t.Fatalf("reading without the poll: %v, %d listings, want its own (2)", err, listings())
	}

	// With the poll: a listing done before it asked is not taken; the next
	// one issued (the poll's round), still in flight, is joined.
	got := make(chan error, 2)
	for range 2 {
		go func() { _, err := r.recentGroups(ctx, polling); got <- err }()
	}
	waitFor(t, func() bool { return awaiting() == 2 }) // neither has listed
	h := hold()
	go func() { rounds <- round(ctx) }()
	waitFor(t, func() bool { return listings() == 3 })
	release(h)
	if err := <-rounds; err != nil {
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

	// The poll parks or stops before another round: its own listing.
	reading := make(chan error, 1)
	go func() { _, err := r.recentGroups(ctx, polling); reading <- err }()
	waitFor(t, func() bool { return awaiting() == 1 })
	pollRuns.Store(false)
	if err := <-reading; err != nil || listings() != 4 {
		t.Fatalf("reading once the poll stopped: %v, %d listings, want its own (4)", err, listings())
	}
	pollRuns.Store(true)

	// No round past the backstop: its own listing.
	r.joinWait = 10 * time.Millisecond
	if _, err := r.recentGroups(ctx, polling); err != nil || listings() != 5 {
		t.Fatalf("reading with no round before the backstop: %v, %d listings, want its own (5)", err, listings())
	}
	r.joinWait = time.Hour

	// A round that failed (after the client's retries) fails the reading:
	// no listing of its own, which would ride out the outage again.
	go func() { _, err := r.recentGroups(ctx, polling); reading <- err }()
	waitFor(t, func() bool { return awaiting() == 1 })
	h = hold()
	go func() {
		_, err := r.listGroupsWith(ctx, true, func(ctx context.Context) ([]client.Group, error) {
			_, _ = f.GroupsFor(ctx, waitGroupsOperation)
			return nil, errors.New("503")
		})
		rounds <- err
	}()
	waitFor(t, func() bool { return listings() == 6 && r.waitingReads() == 1 })
	close(h)
	if err := <-rounds; err == nil {
		t.Fatal("the round meant to fail succeeded")
	}
	if err := <-reading; err == nil || err.Error() != "503" || listings() != 6 {
		t.Fatalf("reading after a failed round: %v, %d listings, want the round's error and no listing of its own (6)", err, listings())
	}

	// Another executor's listing that failed (on that executor's own
	// deadline, say) is not the reading's failure: its own listing.
	go func() { _, err := r.recentGroups(ctx, polling); reading <- err }()
	waitFor(t, func() bool { return awaiting() == 1 })
	h = hold()
	other := make(chan error, 1)
	go func() {
		_, err := r.listGroupsWith(ctx, false, func(ctx context.Context) ([]client.Group, error) {
			_, _ = f.GroupsFor(ctx, groupsOperation)
			return nil, &client.DeadlineError{Wait: time.Second, Last: errors.New("503")}
		})
		other <- err
	}()
	waitFor(t, func() bool { return listings() == 7 && r.waitingReads() == 1 })
	close(h)
	if err := <-other; err == nil {
		t.Fatal("the other executor's listing meant to fail succeeded")
	}
	if err := <-reading; err != nil || listings() != 8 {
		t.Fatalf("reading after another executor's failed listing: %v, %d listings, want its own (8)", err, listings())
	}

	// A round that was stopped (its waits ended) is not taken: its own
	// listing.
	go func() { _, err := r.recentGroups(ctx, polling); reading <- err }()
	waitFor(t, func() bool { return awaiting() == 1 })
	h = hold()
	stopped, stop := context.WithCancel(ctx)
	go func() {
		_, err := r.listGroupsWith(stopped, true, func(ctx context.Context) ([]client.Group, error) {
			_, _ = f.GroupsFor(ctx, waitGroupsOperation)
			return nil, ctx.Err()
		})
		rounds <- err
	}()
	waitFor(t, func() bool { return listings() == 9 && r.waitingReads() == 1 })
	stop()
	close(h)
	if err := <-rounds; !errors.Is(err, context.Canceled) {
		t.Fatalf("the stopped round: %v, want context.Canceled", err)
	}
	if err := <-reading; err != nil || listings() != 10 {
		t.Fatalf("reading after a stopped round: %v, %d listings, want its own (10)", err, listings())
	}
}
