package provider

import (
	"context"

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
// plan's basis check) is served by that newest listing, in flight or done,
// when it was issued
//   - after p's last noted mutation by this run (noteMutation: a create,
//     delete, scale or rollback; a scaler notes each step before its send),
//     so it never predates what this run did to p, and
//   - less than sharedListingFreshFor ago: as fresh as what the waits
//     themselves act on (one poll interval, plus its own time in flight).
//
// Otherwise, and whenever the shared one failed, the executor lists for
// itself (and that listing becomes the newest). Every later reading of
// the executor (after a send, under the prefix lock, after a wait) lists
// afresh: only the first reading, which a fresh listing would give no
// better basis, is shared. So an apply that scales many prefixes while
// earlier ones wait sends one listing a poll interval for all of them, not
// one more per prefix.
//
// The refresh's and the plan's listing (readGroup, groupsForPlan) are kept
// apart: their rules (listAfterDistinctGroups, planGroupsTTL) are unchanged.
const sharedListingFreshFor = 2 * prefix.DefaultPollMax

// listGroups sends GET /monitoring/groups and makes it the run's newest
// listing (in flight at once, so readers that may share it wait for it).
// The answer is shared: callers must not modify it.
func (r *groupReader) listGroups(ctx context.Context) ([]client.Group, error) {
	r.mu.Lock()
	l := &groupListing{done: make(chan struct{}), issued: r.seq, at: r.now()}
	r.latest = l
	r.mu.Unlock()
	l.groups, l.err = r.api.Groups(ctx)
	close(l.done)
	return l.groups, l.err
}

// recentGroups is an executor's first reading of prefix p: the run's newest
// listing when it may serve it (see above), else a listing of its own.
func (r *groupReader) recentGroups(ctx context.Context, p string) ([]client.Group, error) {
	r.mu.Lock()
	l := r.latest
	shared := l != nil && l.issued >= r.mutated[p] && r.now().Sub(l.at) < sharedListingFreshFor
	r.mu.Unlock()
	if shared {
		if err := r.wait(ctx, l.done); err != nil {
			return nil, err
		}
		if l.err == nil {
			return l.groups, nil
		}
	}
	return r.listGroups(ctx)
}

// sharedReader is what the run's Watcher reads through: its listings are
// the run's (listGroups), its final migration reads the client's.
type sharedReader struct {
	r   *groupReader
	api *client.Client
}

func (s sharedReader) Groups(ctx context.Context) ([]client.Group, error) { return s.r.listGroups(ctx) }

func (s sharedReader) GetMigration(ctx context.Context, p, g, id string) (*client.Migration, error) {
	return s.api.GetMigration(ctx, p, g, id)
}
