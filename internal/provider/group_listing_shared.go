package provider

import (
	"context"
	"errors"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
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
//   - while the waits' poll runs, the next listing issued (the poll's next
//     round, or another executor's reading) serves it, joined in flight,
//     if it is issued within sharedListingWait;
//   - otherwise, or when that round was stopped (its waits ended), it lists
//     for itself; a round that failed fails the reading too (the client
//     retried it already, and the waits that shared it end on it).
//
// A listing issued before it asked is never taken, however recent: a group
// created in between would be missed, and a stream scale decided from it
// would rescale that group with no plan showing it. Every later reading of
// the executor (after a send, under the prefix lock, after a wait) lists for
// itself. So an apply that scales many prefixes while earlier ones wait
// sends about one listing a poll round for all of them, not one more per
// prefix, at the cost of each first reading waiting for the next round.
// The poll issues a round at most one interval (DefaultPollMax) after the
// last round's end, and a round takes its own final migration reads:
// sharedListingWait is twice the interval, so a reading almost never
// gives up on a round that is coming.
//
// The refresh's and the plan's listing (readGroup, groupsForPlan) are kept
// apart: their rules (listAfterDistinctGroups, planGroupsTTL) are unchanged.
const sharedListingWait = 2 * prefix.DefaultPollMax

// waitGroupsOperation names the waits' poll rounds in their request ids.
const waitGroupsOperation = "wait-groups"

// listGroups sends GET /monitoring/groups and makes it the run's newest
// listing (in flight at once, so readers that may share it wait for it).
// The answer is shared: callers must not modify it.
func (r *groupReader) listGroups(ctx context.Context) ([]client.Group, error) {
	return r.listGroupsWith(ctx, func(ctx context.Context) ([]client.Group, error) {
		return r.api.GroupsFor(ctx, groupsOperation)
	})
}

func (r *groupReader) listGroupsWith(ctx context.Context, fetch func(context.Context) ([]client.Group, error)) ([]client.Group, error) {
	r.mu.Lock()
	r.listings++
	l := &groupListing{done: make(chan struct{}), issued: r.seq, at: r.now(), n: r.listings}
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
// issued after this call, shared when one comes (polling: the waits' poll
// runs) within sharedListingWait, else its own.
func (r *groupReader) recentGroups(ctx context.Context, polling bool) ([]client.Group, error) {
	r.mu.Lock()
	asked := r.listings // only a listing issued after this one is joined
	r.mu.Unlock()
	var expired <-chan time.Time
	if polling {
		t := time.NewTimer(r.joinWait)
		defer t.Stop()
		expired = t.C
	}
	for polling {
		r.mu.Lock()
		l, next := r.latest, r.issuedListing
		joinable := l != nil && l.n > asked
		r.mu.Unlock()
		if joinable {
			if err := r.wait(ctx, l.done); err != nil {
				return nil, err
			}
			if l.err == nil {
				return l.groups, nil
			}
			if !errors.Is(l.err, context.Canceled) {
				// The round failed after the client's retries: listing
				// again would ride out the same outage twice (one retry
				// layer); the waits that shared it end on it too.
				return nil, l.err
			}
			break // the round was stopped (its waits ended): list
		}
		if next == nil {
			break
		}
		r.mu.Lock()
		r.awaitingRound++
		r.mu.Unlock()
		select {
		case <-next:
		case <-expired:
			polling = false
		case <-ctx.Done():
		}
		r.mu.Lock()
		r.awaitingRound--
		r.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return r.listGroups(ctx)
}

// sharedReader is what the run's Watcher reads through: its listings are
// the run's (listGroupsWith), named as the waits' rounds; its final
// migration reads are the client's.
type sharedReader struct {
	r   *groupReader
	api *client.Client
}

func (s sharedReader) Groups(ctx context.Context) ([]client.Group, error) {
	return s.r.listGroupsWith(ctx, func(ctx context.Context) ([]client.Group, error) {
		return s.api.GroupsFor(ctx, waitGroupsOperation)
	})
}

func (s sharedReader) GetMigration(ctx context.Context, p, g, id string) (*client.Migration, error) {
	return s.api.GetMigration(ctx, p, g, id)
}
