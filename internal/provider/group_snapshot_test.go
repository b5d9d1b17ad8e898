package provider

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// fakeGroups is a coordinator of groups that counts requests. With hold
// set, every request blocks until release is closed.
type fakeGroups struct {
	mu       sync.Mutex
	groups   map[groupKey]client.Group
	gets     map[groupKey]int
	listings int
	listErr  error
	hold     chan struct{}
	// listDeadlines are the deadlines the listings ran under (zero: none).
	listDeadlines []time.Time
}

func newFakeGroups(n int) *fakeGroups {
	f := &fakeGroups{groups: map[groupKey]client.Group{}, gets: map[groupKey]int{}}
	for i := 0; i < n; i++ {
		f.set(fmt.Sprintf("p%d", i), "g", 4)
	}
	return f
}

func (f *fakeGroups) set(p, g string, shards int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.groups[groupKey{p, g}] = client.Group{StreamPrefix: p, ConsumerGroup: g, ShardCount: shards}
}

func (f *fakeGroups) remove(p, g string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.groups, groupKey{p, g})
}

func (f *fakeGroups) wait() {
	f.mu.Lock()
	h := f.hold
	f.mu.Unlock()
	if h != nil {
		<-h
	}
}

func (f *fakeGroups) GetGroup(_ context.Context, p, g string) (*client.Group, error) {
	f.mu.Lock()
	f.gets[groupKey{p, g}]++
	f.mu.Unlock()
	f.wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	grp, ok := f.groups[groupKey{p, g}]
	if !ok {
		return nil, &client.APIError{HTTPStatus: 404, ErrorCode: client.CodeGroupNotFound}
	}
	return &grp, nil
}

func (f *fakeGroups) GroupsFor(ctx context.Context, _ string) ([]client.Group, error) {
	d, _ := ctx.Deadline()
	f.mu.Lock()
	f.listings++
	f.listDeadlines = append(f.listDeadlines, d)
	f.mu.Unlock()
	f.wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.listErr != nil {
		return nil, f.listErr
	}
	var out []client.Group
	for _, g := range f.groups {
		out = append(out, g)
	}
	return out, nil
}

func (f *fakeGroups) counts() (gets, listings int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.gets {
		gets += n
	}
	return gets, f.listings
}

func mustRead(t *testing.T, r *groupReader, p, g string) *client.Group {
	t.Helper()
	grp, err := r.read(context.Background(), p, g)
	if err != nil {
		t.Fatalf("read %s/%s: %v", p, g, err)
	}
	return grp
}

// refreshLike reads each of n groups twice (a group and its shard count), as
// a refresh of 2n resources does.
func refreshLike(t *testing.T, r *groupReader, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		mustRead(t, r, fmt.Sprintf("p%d", i), "g")
	}
	for i := 0; i < n; i++ {
		mustRead(t, r, fmt.Sprintf("p%d", i), "g")
	}
}

func TestGroupReaderSmallWorkspaceNeverLists(t *testing.T) {
	f := newFakeGroups(50)
	r := newGroupReader(f)
	refreshLike(t, r, listAfterDistinctGroups)
	gets, listings := f.counts()
	if listings != 0 || gets != listAfterDistinctGroups {
		t.Errorf("refresh of %d groups: %d GETs, %d listings; want one GET per group and no listing", listAfterDistinctGroups, gets, listings)
	}
}

func TestGroupReaderLargeWorkspaceListsOnce(t *testing.T) {
	for _, n := range []int{listAfterDistinctGroups + 1, 50, 1000} {
		f := newFakeGroups(n + 10)
		r := newGroupReader(f)
		refreshLike(t, r, n)
		gets, listings := f.counts()
		if listings != 1 || gets != listAfterDistinctGroups {
			t.Errorf("refresh of %d groups: %d GETs, %d listings; want %d GETs and one listing", n, gets, listings, listAfterDistinctGroups)
		}
		if total := gets + listings; n >= 50 && total > 3 {
			t.Errorf("refresh of %d groups (%d resources) sent %d requests, want at most 3", n, 2*n, total)
		}
	}
}

func TestGroupReaderMissingGroupIsNotFound(t *testing.T) {
	for _, n := range []int{1, listAfterDistinctGroups + 5} {
		f := newFakeGroups(n)
		r := newGroupReader(f)
		refreshLike(t, r, n) // the last read came from a listing when n > K
		_, err := r.read(context.Background(), "absent", "g")
		if !client.IsNotFound(err) {
			t.Errorf("n=%d: read of an absent group: %v, want a not-found error", n, err)
		}
	}
}

// Concurrent reads: of one group share one GET; past the threshold, all
// wait for one listing.
func TestGroupReaderSingleFlight(t *testing.T) {
	f := newFakeGroups(40)
	f.hold = make(chan struct{})
	r := newGroupReader(f)
	var wg sync.WaitGroup
	read := func(p string) {
		defer wg.Done()
		if _, err := r.read(context.Background(), p, "g"); err != nil {
			t.Error(err)
		}
	}
	// Two reads of one group while its GET is held: one request.
	wg.Add(2)
	go read("p0")
	waitFor(t, func() bool { g, _ := f.counts(); return g == 1 })
	go read("p0")
	waitFor(t, func() bool { return r.waitingReads() == 1 })
	// Past the threshold: 30 distinct reads all wait for one listing.
	for i := 1; i < 31; i++ {
		wg.Add(1)
		go read(fmt.Sprintf("p%d", i))
	}
	waitFor(t, func() bool {
		_, l := f.counts()
		g, _ := f.counts()
		// p1 (and p2, …) up to the threshold GET; the rest wait on the listing.
		return l == 1 && g == listAfterDistinctGroups && r.waitingReads() == 1+30-(listAfterDistinctGroups-1)
	})
	close(f.hold)
	wg.Wait()
	if g, l := f.counts(); g != listAfterDistinctGroups || l != 1 {
		t.Errorf("%d GETs and %d listings, want %d and 1", g, l, listAfterDistinctGroups)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a hang guard, not a timing margin
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		runtime.Gosched()
	}
}

func (r *groupReader) waitingReads() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiting
}

// After noteMutation(p), reads of p go to the coordinator; other prefixes
// keep using the listing.
func TestGroupReaderMutationBypassesOlderAnswers(t *testing.T) {
	f := newFakeGroups(10)
	r := newGroupReader(f)
	refreshLike(t, r, 10)
	f.set("p5", "g", 2)
	f.set("p6", "g", 2) // out of band, not noted: a run reads point-in-time
	r.noteMutation("p5")
	if got := mustRead(t, r, "p5", "g").ShardCount; got != 2 {
		t.Errorf("read after a noted mutation saw %d shards, want 2 (fresh)", got)
	}
	if got := mustRead(t, r, "p6", "g").ShardCount; got != 4 {
		t.Errorf("unmutated prefix read %d shards, want the listing's 4", got)
	}
	gets, listings := f.counts()
	if listings != 1 || gets != listAfterDistinctGroups+1 {
		t.Errorf("%d GETs, %d listings; want one extra GET for the mutated prefix", gets, listings)
	}
	// The GET after the mutation is shared by later reads of p5 …
	mustRead(t, r, "p5", "g")
	if g, _ := f.counts(); g != listAfterDistinctGroups+1 {
		t.Errorf("second read after the mutation sent another GET")
	}
	// … until the next mutation.
	f.remove("p5", "g")
	r.noteMutation("p5")
	if _, err := r.read(context.Background(), "p5", "g"); !client.IsNotFound(err) {
		t.Errorf("read after a noted delete: %v, want not found", err)
	}
}

// A mutation noted while a listing is in flight makes that listing unusable
// for the mutated prefix.
func TestGroupReaderMutationDuringListing(t *testing.T) {
	f := newFakeGroups(10)
	f.hold = make(chan struct{})
	r := newGroupReader(f)
	for i := 0; i < listAfterDistinctGroups; i++ {
		r.asked[groupKey{fmt.Sprintf("x%d", i), "g"}] = struct{}{}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		mustRead(t, r, "p1", "g") // starts the listing
	}()
	waitFor(t, func() bool { _, l := f.counts(); return l == 1 })
	r.noteMutation("p2")
	f.set("p2", "g", 7)
	close(f.hold)
	<-done
	if got := mustRead(t, r, "p2", "g").ShardCount; got != 7 {
		t.Errorf("read of a prefix mutated after the listing was issued saw %d shards, want 7", got)
	}
}

func TestGroupReaderListingFailureFallsBack(t *testing.T) {
	f := newFakeGroups(10)
	f.listErr = errors.New("boom")
	r := newGroupReader(f)
	refreshLike(t, r, 10)
	gets, listings := f.counts()
	if listings != 1 || gets != 10 {
		t.Errorf("%d GETs, %d listings; want one failed listing and one GET per group", gets, listings)
	}
}

// groupsForPlan and reads share one listing, whichever comes first.
func TestGroupsForPlanSharesTheListing(t *testing.T) {
	f := newFakeGroups(10)
	r := newGroupReader(f)
	refreshLike(t, r, 10)
	if gs, err := r.forPlan(context.Background()); err != nil || len(gs) != 10 {
		t.Fatalf("forPlan: %d groups, %v", len(gs), err)
	}
	if _, l := f.counts(); l != 1 {
		t.Errorf("plan after refresh: %d listings, want 1", l)
	}

	f = newFakeGroups(10)
	r = newGroupReader(f)
	if _, err := r.forPlan(context.Background()); err != nil {
		t.Fatal(err)
	}
	refreshLike(t, r, 10)
	if g, l := f.counts(); g != 0 || l != 1 {
		t.Errorf("refresh after a plan-time listing: %d GETs, %d listings; want 0 and 1", g, l)
	}

	// After a mutation, plan-time checks reuse the listing for planGroupsTTL,
	// then list again.
	now := time.Now()
	r.now = func() time.Time { return now }
	r.noteMutation("p1")
	if _, err := r.forPlan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, l := f.counts(); l != 1 {
		t.Errorf("within planGroupsTTL of the listing: %d listings, want 1", l)
	}
	r.now = func() time.Time { return now.Add(planGroupsTTL) }
	if _, err := r.forPlan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, l := f.counts(); l != 2 {
		t.Errorf("after a mutation and planGroupsTTL: %d listings, want 2", l)
	}
}
