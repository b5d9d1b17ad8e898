package provider

import (
	"context"
	"errors"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// An apply's groups listings: one view of the coordinator's groups shared
// by the run's waits and its executors.
//
// Every GET /monitoring/groups an apply's shard count sends (the waits'
// poll, prefix.Watcher, and every reading of a prefix by an executor) goes
// through listGroups, which makes it the run's newest listing. An
// executor's first reading of stream prefix p (scaler.start, before the
// plan's basis check and the first decision) is a listing issued after it
// asked, so it is as fresh as one of its own (and issued after anything
// this run did to p before it asked):
//   - while the waits' poll will issue another round (the Watcher's Polling,
//     asked again every pollingRecheck), the next listing issued (the
//     poll's next round, or another executor's reading) serves it, joined
//     in flight. No clock decides it: a busy machine only makes the reading
//     wait longer for the round that is coming. sharedListingBackstop bounds
//     a wait for a round held up in the client's retries;
//   - otherwise (no poll, or it parks or stops: its waits have what they
//     need), it lists for itself; likewise when the listing it joined was a
//     round that was stopped, or another executor's that failed (on that
//     executor's own deadline or interrupt, say). A round that failed after
//     the client's retries fails the reading too: the waits it served end on
//     it, and a listing of its own would ride out the same outage twice.
//
// A listing issued before it asked is never taken, however recent: a group
// created in between would be missed, and a stream scale decided from it
// would rescale that group with no plan showing it. Every later reading of
// the executor (after a send, under the prefix lock, after a wait) lists for
// itself. So an apply that scales many prefixes while earlier ones wait
// sends about one listing a poll round for all of them, not one more per
// prefix, at the cost of each first reading waiting for the next round (at
// most one interval, DefaultPollMax, after the last round's end, plus that
// round's own final migration reads).
//
// The refresh's and the plan's listing (readGroup, groupsForPlan) are kept
// apart: their rules (listAfterDistinctGroups, planGroupsTTL) are unchanged.
const (
	sharedListingBackstop = 30 * time.Second
	pollingRecheck        = 100 * time.Millisecond
)

// waitGroupsOperation names the waits' poll rounds in their request ids.
const waitGroupsOperation = "wait-groups"

// listGroups sends GET /monitoring/groups and makes it the run's newest
// listing (in flight at once, so readers that may share it wait for it).
// The answer is shared: callers must not modify it.
func (r *groupReader) listGroups(ctx context.Context) ([]client.Group, error) {
	return r.listGroupsWith(ctx, false, func(ctx context.Context) ([]client.Group, error) {
		return r.api.GroupsFor(ctx, groupsOperation)
	})
}

// listGroupsWith is listGroups through fetch; round: a waits' poll round
// (its context is the poll's own, ended only when its waits end).
func (r *groupReader) listGroupsWith(ctx context.Context, round bool, fetch func(context.Context) ([]client.Group, error)) ([]client.Group, error) {
	r.mu.Lock()
	r.listings++
	l := &groupListing{done: make(chan struct{}), issued: r.seq, at: r.now(), n: r.listings, round: round}
	r.latest = l
	if r.issuedListing != nil {
		close(r.issuedListing) // wakes the first readings waiting for one
	}
	r.issuedListing = make(chan struct{})
	r.mu.Unlock()
	l.groups, l.err = fetch(ctx)
	close(l.done)
	return l.groups, l.err
}

// recentGroups is an executor's first reading of a prefix: a listing
// issued after this call, shared when one comes while polling reports that
// the waits' poll will issue another round (nil: no poll), else its own.
func (r *groupReader) recentGroups(ctx context.Context, polling func() bool) ([]client.Group, error) {
	r.mu.Lock()
	asked := r.listings // only a listing issued after this one is joined
	r.mu.Unlock()
	if polling == nil || !polling() {
		return r.listGroups(ctx)
	}
	backstop := time.NewTimer(r.joinWait)
	defer backstop.Stop()
	recheck := time.NewTicker(pollingRecheck)
	defer recheck.Stop()
	for last := false; ; {
		r.mu.Lock()
		l, next := r.latest, r.issuedListing
		joinable := l != nil && l.n > asked
		r.mu.Unlock()
		if joinable {
			if err := r.wait(ctx, l.done); err != nil {
				return nil, err
			}
			switch {
			case l.err == nil:
				return l.groups, nil
			case l.round && !errors.Is(l.err, context.Canceled):
				// The round failed after the client's retries: listing
				// again would ride out the same outage twice (one retry
				// layer); the waits it served end on it too.
				return nil, l.err
			}
			// A round that was stopped (its waits ended), or another
			// executor's listing, which failed on that executor's own
			// deadline or interrupt: list.
			return r.listGroups(ctx)
		}
		if last || next == nil || !polling() {
			return r.listGroups(ctx)
		}
		r.mu.Lock()
		r.awaitingRound++
		r.mu.Unlock()
		select {
		case <-next:
		case <-recheck.C:
		case <-backstop.C:
			last = true // one more look: a listing issued meanwhile is joined
		case <-ctx.Done():
		}
		r.mu.Lock()
		r.awaitingRound--
		r.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// sharedReader is what the run's Watcher reads through: its listings are
// the run's (listGroupsWith), named as the waits' rounds; its final
// migration reads are the client's.
type sharedReader struct {
	r   *groupReader
	api *client.Client
}

func (s sharedReader) Groups(ctx context.Context) ([]client.Group, error) {
	return s.r.listGroupsWith(ctx, true, func(ctx context.Context) ([]client.Group, error) {
		return s.api.GroupsFor(ctx, waitGroupsOperation)
	})
}

func (s sharedReader) GetMigration(ctx context.Context, p, g, id string) (*client.Migration, error) {
	return s.api.GetMigration(ctx, p, g, id)
}
