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

// Run-scoped group reads.
//
// One provider configuration (one providerData) serves one Terraform walk:
// Terraform configures the provider once per plan or apply walk, and a refresh
// reads every managed group, often twice (a group and its shard count read the
// same {stream prefix, consumer group}). readGroup makes such a refresh cost
// the coordinator O(1) requests while keeping small workspaces on per-group
// GETs.
//
// The rule:
//
//  1. Reads of one {p, g} share one request: a read waits for a read of the
//     same group already in flight or reuses its answer (single-flight).
//  2. The first listAfterDistinctGroups distinct groups a run reads are each
//     fetched with GET /streams/{p}/groups/{g}. Once the run has asked for more
//     distinct groups than that, one GET /monitoring/groups (which returns
//     every group, in the same shape as the per-group GET) serves that read
//     and every later one; reads arriving while it is in flight wait for it.
//     A refresh of N groups (2N resources) therefore sends at most
//     listAfterDistinctGroups + 1 requests. A workspace of at most
//     listAfterDistinctGroups groups lists the coordinator only for its shard
//     count resources, whose refresh records each prefix as a whole
//     (recordSiblingsSeen): one listing for the run.
//  3. A listing made for plan-time checks (groupsForPlan) serves reads too, and
//     a listing made for reads serves groupsForPlan: a plan lists at most once.
//  4. Freshness: noteMutation(p) marks a mutation of stream prefix p by this
//     provider. An answer (listing or GET) is used for a read of p only if
//     its request was issued after p's last noted mutation; older answers are
//     ignored and the read goes to the coordinator (per-group GET, shared by
//     the reads issued after the mutation).
//  5. If the listing fails, the reads that waited for it and every later read
//     fall back to per-group GETs (the listing is not retried in that run).
//  6. A safety net: no answer older than snapshotMaxAge is used.
//
// A group absent from a listing is reported as a GROUP_NOT_FOUND *APIError
// (client.IsNotFound is true), as the per-group GET would.
const (
	listAfterDistinctGroups = 2
	snapshotMaxAge          = 10 * time.Minute
)

// groupFetcher is what the reader needs from the API client.
type groupFetcher interface {
	GetGroup(ctx context.Context, p, g string) (*client.Group, error)
	// GroupsFor lists every group, its request id naming operation.
	GroupsFor(ctx context.Context, operation string) ([]client.Group, error)
}

// The operations the run's listings name in their request ids, so logs and
// the coordinator's request ids tell them apart: "groups", the listing
// that serves a refresh's reads of many groups (readGroup) or an
// executor's reading of its prefix; "snapshot-groups", the run's snapshot
// that groupsForPlan shares (plan-time checks, the refresh's record of a
// prefix, list queries, the read before a group's delete); and
// waitGroupsOperation, a waits' poll round.
const (
	groupsOperation         = "groups"
	snapshotGroupsOperation = "snapshot-groups"
)

// groupReader holds one run's group answers. The zero value is not usable;
// see newGroupReader.
type groupReader struct {
	api groupFetcher
	now func() time.Time

	mu sync.Mutex
	// seq counts noted mutations; every request records seq when issued.
	seq uint64
	// mutated is the seq of each prefix's last noted mutation; lastMutation
	// the highest of them.
	mutated      map[string]uint64
	lastMutation uint64
	// lastDelete is the seq of the last noted delete (noteDelete).
	lastDelete uint64
	// asked holds every distinct group this run read through readGroup.
	asked map[groupKey]struct{}
	// gets is the latest per-group GET of each group.
	gets map[groupKey]*groupFetch
	// listing is the latest GET /monitoring/groups (in flight or done).
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
	// forReads is set when reads (not plan-time checks) asked for it.
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

// readGroup returns group {p, g} as the coordinator has it, for a resource's
// Read (refresh). It costs the coordinator at most one request per distinct
// group for the first listAfterDistinctGroups groups of the run and one
// listing for all the rest (see the rule above). A group that does not exist
// returns an error for which client.IsNotFound is true. The returned group is
// shared: callers must not modify it.
func (pd *providerData) readGroup(ctx context.Context, p, g string) (*client.Group, error) {
	if pd.unconfigured() {
		return nil, errProviderUnconfigured
	}
	return pd.groups.read(ctx, p, g)
}

// noteMutation tells the reader that this provider is changing stream prefix
// p (a create, delete, scale or rollback of any of its groups). Call it after
// the mutating request returns (and before waiting on its effect), whether it
// succeeded or not: reads of p issued afterwards never use an answer requested
// before this call.
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

// noteDelete is noteMutation for a delete of a group of prefix p: a listing
// taken before it never serves a later plan-time check, however recent (a
// create planned again after the delete must not count the deleted group).
func (pd *providerData) noteDelete(p string) {
	pd.groups.noteMutation(p)
	pd.groups.mu.Lock()
	pd.groups.lastDelete = pd.groups.seq
	pd.groups.mu.Unlock()
}

// usable reports whether an answer issued at seq issued, at time at, may
// serve a read of prefix p. Callers hold r.mu.
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

// fromListing waits for listing l and looks k up in it. ok is false when the
// listing failed and the caller should fall back to a per-group GET.
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

// fromFetch waits for another read's GET of the same group. A failed GET is
// not shared (ok false): the caller makes its own, with its own context.
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

// startListingLocked issues GET /monitoring/groups in the background and
// makes it the run's listing. Callers hold r.mu. The request runs without the
// caller's cancellation, since other reads wait for it too (the client's own
// timeouts still bound it).
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
		// Detached from the caller's cancellation, not from its deadline:
		// inside a resource timeout that bounds the listing, and
		// read_timeout only outside one.
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

// groupsForPlan lists every group for plan-time checks, which are best
// effort: one listing serves every resource planned in this run, and the
// listing made for refresh serves them too. It lists again only when this
// provider noted a mutation since the last listing and that listing is older
// than planGroupsTTL (so apply-time re-plans after creates still share one
// listing for a while), or when the last listing failed. Apply-time decisions
// must read afresh instead.
func (pd *providerData) groupsForPlan(ctx context.Context) ([]client.Group, error) {
	if pd.unconfigured() {
		return nil, errProviderUnconfigured
	}
	return pd.groups.forPlan(ctx)
}

// planGroupsTTL bounds how stale a plan-time listing may be once this
// provider has mutated something since it was taken.
const planGroupsTTL = 10 * time.Second

func (r *groupReader) forPlan(ctx context.Context) ([]client.Group, error) {
	r.mu.Lock()
	l := r.listing
	reuse := l != nil && (!l.isDone() || l.err == nil) && r.now().Sub(l.at) < snapshotMaxAge && l.issued >= r.lastDelete &&
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

func (l *groupListing) isDone() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// notInListing is the not-found answer for a group a listing lacks, shaped
// like the coordinator's own 404 so client.IsNotFound reports it.
func notInListing(k groupKey, at time.Time) error {
	return &client.APIError{
		HTTPStatus: http.StatusNotFound, Status: "NOT_FOUND", ErrorCode: client.CodeGroupNotFound,
		Message: fmt.Sprintf("group %q under stream prefix %q is not in the coordinator's group listing taken at %s",
			k.group, k.prefix, at.UTC().Format(time.RFC3339)),
		Method: http.MethodGet, Path: "/coord/v1/monitoring/groups",
	}
}
