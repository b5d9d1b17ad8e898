package prefix

import (
	"sync"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Run is the journal of one run (one Terraform operation, served by one
// provider process): every step its executor carried out on each stream
// prefix, with the target and the prefix as the step's plan showed it. The
// executor writes it, under the prefix lock, before each step's send;
// nothing else writes it. A stream scale or per-group scale whose one send
// was refused before any change, or never sent, is struck out again. Every
// other step stays, whatever its answer: a lost answer may have landed, a
// 409 or 503 may follow a part-way scale, and a rollback is idempotent (a
// re-send of an applied one answers as the first would), so an entry may
// name a step that did not take effect; what it explains is then a move to
// the count this run's reviewed change goes to anyway.
//
// It is the one answer to the question another resource of the same run
// asks about a prefix the shard count resource changes: is this change the
// run's own, the one its plan showed? A group create with a configured
// count that finds its siblings at another asks Explains (yes: the new
// group joins at the count they were taken to; no: the create is refused),
// and a plan made again during the apply takes the groups as the plan saw
// them (AsPlanned).
type Run struct {
	mu      sync.Mutex
	entries map[string][]Entry // stream prefix → steps, in order
}

// Entry is one step of a run on a prefix.
type Entry struct {
	Kind StepKind
	// Group is the group a per-group step (ScaleGroup, Adopt, Rollback)
	// concerns; "" for a StreamScale.
	Group string
	// Target is the count the step takes the prefix to.
	Target int32
	// Planned is the prefix's groups with the counts the plan of the
	// change showed (resharding.affected_groups); nil when the plan could
	// not preview them.
	Planned map[string]int64
	// RequestID is the send's (X-Request-Id); "" for a step that sends
	// nothing (Adopt) or one journaled before its request id is made.
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

// Strike removes the last step journaled for p, whose send was proved not
// to have reached the coordinator (the client refused it, or the
// coordinator answered with its own decision before doing anything).
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

// Explains reports that a step of this run took group n of prefix p, which
// the plan showed at was, to now: a step with target now whose plan saw n
// at was (or could not preview the prefix).
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

// AsPlanned is grp as the plan of this run's change of its prefix saw it: a
// group at the target of the run's latest step whose plan showed the group
// (or under way to that target) gets the count that plan showed back. Any
// other group is returned as it is.
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
