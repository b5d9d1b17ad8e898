package prefix

import (
	"sync"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Run journals every step a run's executor carried out on each stream prefix,
// written under the prefix lock before each send, so other resources of the
// run can tell its own changes from a stale plan. A step whose send was
// refused before any change is struck out; others stay, since a lost answer
// may have landed.
type Run struct {
	mu      sync.Mutex
	entries map[string][]Entry // stream prefix → steps, in order
}

// Entry is one step of a run on a prefix.
type Entry struct {
	Kind StepKind
	// Group is the group of a per-group step; "" for a StreamScale.
	Group string
	// Target is the count the step takes the prefix to.
	Target int32
	// Planned is the groups' counts as the plan showed them; nil when it could not.
	Planned map[string]int64
	// RequestID is the send's X-Request-Id; "" when nothing is sent.
	RequestID string
}

// Note journals a step of prefix p.
func (r *Run) Note(p string, e Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries == nil {
		r.entries = map[string][]Entry{}
	}
	r.entries[p] = append(r.entries[p], e)
}

// Strike removes the last step journaled for p, proved not to have reached
// the coordinator.
func (r *Run) Strike(p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.entries[p]); n > 0 {
		r.entries[p] = r.entries[p][:n-1]
	}
}

// Entries is what the run journaled for p, in order.
func (r *Run) Entries(p string) []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Entry(nil), r.entries[p]...)
}

// Explains reports that a step of this run took group n of prefix p from was to now.
func (r *Run) Explains(p, n string, was, now int64) bool {
	for _, e := range r.Entries(p) {
		if int64(e.Target) != now {
			continue
		}
		if c, ok := e.Planned[n]; e.Planned == nil || (ok && c == was) {
			return true
		}
	}
	return false
}

// AsPlanned is grp as the plan of this run's change of its prefix saw it.
func (r *Run) AsPlanned(grp client.Group) client.Group {
	entries := r.Entries(grp.StreamPrefix)
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		was, ok := e.Planned[grp.ConsumerGroup]
		if !ok {
			continue
		}
		am := grp.ActiveMigration
		if grp.ShardCount == e.Target || (!am.Finished() && am.ToShardCount == e.Target) {
			grp.ShardCount = int32(was)
		}
		return grp
	}
	return grp
}
