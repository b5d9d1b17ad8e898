package provider

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Run-scoped group reads: a refresh reads every managed group, often twice, so
// reads of one group share one request, and once a run has read more than
// listAfterDistinctGroups groups one GET /monitoring/groups serves the rest.
// A plan lists at most once. An answer serves a read of prefix p only if it
// was requested after this provider's last noted mutation of p.
const (
	listAfterDistinctGroups = 2
	snapshotMaxAge          = 10 * time.Minute
)

type groupFetcher interface {
	GetGroup(ctx context.Context, p, g string) (*client.Group, error)
	// GroupsFor lists every group, its request id naming operation.
	GroupsFor(ctx context.Context, operation string) ([]client.Group, error)
}

// Listing operations, named in request ids so logs tell them apart.
const (
	groupsOperation         = "groups"
	snapshotGroupsOperation = "snapshot-groups"
)

// groupReader's zero value is not usable; see newGroupReader.
type groupReader struct {
	api groupFetcher
	now func() time.Time

	mu            sync.Mutex
	seq           uint64
	mutated       map[string]uint64
	lastMutation  uint64
	lastDelete    uint64
	asked         map[groupKey]struct{}
	gets          map[groupKey]*groupFetch
	listing       *groupListing
	listingFailed bool
	// waiting counts reads blocked on a request in flight (tests observe it).
	waiting int
}

type groupFetch struct {
	done   chan struct{}
	issued uint64
	at     time.Time
	group  *client.Group
	err    error
}

type groupListing struct {
	forReads bool
	done     chan struct{}
	issued   uint64
	at       time.Time
	groups   []client.Group
	index    map[groupKey]int
	err      error
}

func newGroupReader(api groupFetcher) *groupReader {
	return &groupReader{
		api: api, now: time.Now,
		mutated: map[string]uint64{}, asked: map[groupKey]struct{}{}, gets: map[groupKey]*groupFetch{},
	}
}

// readGroup's result is shared: callers must not modify it.
func (pd *providerData) readGroup(ctx context.Context, p, g string) (*client.Group, error) {
	if pd.unconfigured() {
		return nil, errProviderUnconfigured
	}
	return pd.groups.read(ctx, p, g)
}

// noteMutation must be called after every mutating request of prefix p,
// successful or not, so later reads of p never use an older answer.
func (pd *providerData) noteMutation(p string) {
	if pd.unconfigured() {
		return
	}
	pd.groups.noteMutation(p)
}

func (r *groupReader) noteMutation(p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	r.mutated[p] = r.seq
	r.lastMutation = r.seq
}

// noteDelete: a create planned again after the delete must not count the
// deleted group, so older listings never serve later plan-time checks.
func (pd *providerData) noteDelete(p string) {
	pd.groups.noteMutation(p)
	pd.groups.mu.Lock()
	pd.groups.lastDelete = pd.groups.seq
	pd.groups.mu.Unlock()
}

// usable: callers hold r.mu.
func (r *groupReader) usable(issued uint64, at time.Time, p string) bool {
	return issued >= r.mutated[p] && r.now().Sub(at) < snapshotMaxAge
}

func (r *groupReader) read(ctx context.Context, p, g string) (*client.Group, error) {
	k := groupKey{p, g}
	r.mu.Lock()
	r.asked[k] = struct{}{}
	if l := r.listing; l != nil && !r.listingFailed && r.usable(l.issued, l.at, p) {
		r.mu.Unlock()
		if grp, ok, err := r.fromListing(ctx, l, k); ok || err != nil {
			return grp, err
		}
		r.mu.Lock()
	}
	if f := r.gets[k]; f != nil && r.usable(f.issued, f.at, p) {
		r.mu.Unlock()
		if grp, ok, err := r.fromFetch(ctx, f); ok || err != nil {
			return grp, err
		}
		r.mu.Lock()
	}
	if r.listing == nil && len(r.asked) > listAfterDistinctGroups {
		l := r.startListingLocked(ctx, true)
		r.mu.Unlock()
		if grp, ok, err := r.fromListing(ctx, l, k); ok || err != nil {
			return grp, err
		}
		r.mu.Lock()
	}
	f := &groupFetch{done: make(chan struct{}), issued: r.seq, at: r.now()}
	r.gets[k] = f
	r.mu.Unlock()
	f.group, f.err = r.api.GetGroup(ctx, p, g)
	close(f.done)
	return f.group, f.err
}

func (r *groupReader) fromListing(ctx context.Context, l *groupListing, k groupKey) (*client.Group, bool, error) {
	if err := r.wait(ctx, l.done); err != nil {
		return nil, false, err
	}
	if l.err != nil {
		return nil, false, nil //nolint:nilerr // a failed listing means "read this group with its own GET"
	}
	i, found := l.index[k]
	if !found {
		return nil, true, notInListing(k, l.at)
	}
	return &l.groups[i], true, nil
}

// A failed GET is not shared: the caller makes its own, with its own context.
func (r *groupReader) fromFetch(ctx context.Context, f *groupFetch) (*client.Group, bool, error) {
	if err := r.wait(ctx, f.done); err != nil {
		return nil, false, err
	}
	if f.err != nil && !client.IsNotFound(f.err) {
		return nil, false, nil
	}
	return f.group, true, f.err
}

func (r *groupReader) wait(ctx context.Context, done chan struct{}) error {
	select {
	case <-done:
		return nil
	default:
	}
	r.mu.Lock()
	r.waiting++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.waiting--
		r.mu.Unlock()
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startListingLocked: callers hold r.mu.
func (r *groupReader) startListingLocked(ctx context.Context, forReads bool) *groupListing {
	l := &groupListing{forReads: forReads, done: make(chan struct{}), issued: r.seq, at: r.now()}
	r.listing = l
	tflog.Debug(ctx, "listing every group once to serve this run's reads (GET /monitoring/groups)",
		map[string]any{"distinct_groups_read": len(r.asked), "per_group_reads_before_listing": listAfterDistinctGroups})
	go func() {
		op := groupsOperation
		if !forReads {
			op = snapshotGroupsOperation
		}
		// Other reads wait for this listing, so detach it from the caller's
		// cancellation but not from its deadline.
		lctx := context.WithoutCancel(ctx)
		if d, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			lctx, cancel = context.WithDeadline(lctx, d)
			defer cancel()
		}
		groups, err := r.api.GroupsFor(lctx, op)
		if err == nil {
			l.groups, l.index = groups, make(map[groupKey]int, len(groups))
			for i := range groups {
				l.index[groupKey{groups[i].StreamPrefix, groups[i].ConsumerGroup}] = i
			}
		}
		r.mu.Lock()
		l.err = err
		if err != nil && forReads {
			r.listingFailed = true
		}
		r.mu.Unlock()
		if err != nil && forReads {
			tflog.Debug(ctx, "group listing failed; reading groups one by one for the rest of this run", map[string]any{"error": err.Error()})
		}
		close(l.done)
	}()
	return l
}

// groupsForPlan is for best-effort plan-time checks; apply-time decisions must
// read afresh.
func (pd *providerData) groupsForPlan(ctx context.Context) ([]client.Group, error) {
	if pd.unconfigured() {
		return nil, errProviderUnconfigured
	}
	return pd.groups.forPlan(ctx)
}

// planGroupsTTL: once this provider has mutated something, a plan-time
// listing still serves for this long, so the re-plans an apply makes after
// its creates share one listing; a delete always forces a new one.
const planGroupsTTL = 10 * time.Second

func (r *groupReader) forPlan(ctx context.Context) ([]client.Group, error) {
	r.mu.Lock()
	l := r.listing
	// l.err is set under r.mu: a listing in flight or answered serves, a failed one does not.
	reuse := l != nil && l.err == nil && r.now().Sub(l.at) < snapshotMaxAge && l.issued >= r.lastDelete &&
		(l.issued >= r.lastMutation || r.now().Sub(l.at) < planGroupsTTL)
	if !reuse {
		l = r.startListingLocked(ctx, false)
	}
	r.mu.Unlock()
	if err := r.wait(ctx, l.done); err != nil {
		return nil, err
	}
	if l.err != nil {
		r.mu.Lock()
		if r.listing == l && !l.forReads {
			r.listing = nil // reads may still list for themselves
		}
		r.mu.Unlock()
		return nil, l.err
	}
	if l.groups == nil {
		return []client.Group{}, nil
	}
	return l.groups, nil
}

// notInListing is shaped like the coordinator's 404 so client.IsNotFound holds.
func notInListing(k groupKey, at time.Time) error {
	return &client.APIError{
		HTTPStatus: http.StatusNotFound, Status: "NOT_FOUND", ErrorCode: client.CodeGroupNotFound,
		Message: fmt.Sprintf("group %q under stream prefix %q is not in the coordinator's group listing taken at %s",
			k.group, k.prefix, at.UTC().Format(time.RFC3339)),
		Method: http.MethodGet, Path: "/coord/v1/monitoring/groups",
	}
}
