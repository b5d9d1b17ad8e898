package coordinator

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Assignment follows KIP-848's shape:
//   - The target assignment spreads shards 0..shardCount-1 round-robin over
//     the live members sorted by member id: shard i goes to member i mod n.
//   - It is recomputed, with groupEpoch bumped and assignmentEpoch set to
//     it, whenever membership or the shard count changes, or a migration
//     starts draining (bumpMetadata with assignments affected).
//   - Revoke before assign: a member is granted a target shard only once no
//     other live member holds it (owns, was granted, or is revoking it);
//     until then the shard is pending.
//   - A member's epoch catches up to the assignment epoch once it holds
//     nothing outside its target.

// bumpMetadata records one change of the group's stored state, as the
// server's bumpMetadata does (CONTRACT §4, "What moves metadataVersion and
// groupEpoch"): metadataVersion rises on every change; groupEpoch (with
// assignmentEpoch following it, and the target recomputed) only where
// assignments are affected. The events and what they move:
//
//	scale accepted, rollback                          version + epoch
//	member joins or rejoins, leaves                   version + epoch
//	member expires or is fenced                       version + epoch
//	migration ACTIVE→DRAINING                         version + epoch
//	migration DRAINING→DEPRECATED                     version
//	stale members pruned                              version
//	steady heartbeat, any read                        nothing
func (g *group) bumpMetadata(assignmentsAffected bool) {
	g.metadataVersion += g.numbering.versionStride()
	if !assignmentsAffected {
		return
	}
	g.groupEpoch += g.numbering.epochStride()
	g.assignmentEpoch = g.groupEpoch
	g.recomputeTarget()
}

func (g *group) recomputeTarget() {
	live := g.liveMembers()
	g.target = make(map[string][]int, len(live))
	for _, m := range live {
		g.target[m.id] = []int{}
	}
	if len(live) == 0 {
		return
	}
	for i := range g.shardCount {
		id := live[i%len(live)].id
		if g.numbering.ContiguousAssignment {
			id = live[i*len(live)/g.shardCount].id
		}
		g.target[id] = append(g.target[id], i)
	}
}

// state is EMPTY without live members, STABLE when every live member holds
// exactly its target and nothing else, RECONCILING otherwise.
func (g *group) state() string {
	live := g.liveMembers()
	if len(live) == 0 {
		return GroupEmpty
	}
	for _, m := range live {
		if !g.converged(m) {
			return GroupReconciling
		}
	}
	return GroupStable
}

func (g *group) converged(m *member) bool {
	return len(m.revoking) == 0 && sameSet(m.current, g.target[m.id])
}

func sameSet(a, b []int) bool { return slices.Equal(dedupe(a), dedupe(b)) }

// heldByOthers is every shard another live member owns, was granted or is
// revoking.
func (g *group) heldByOthers(self string) map[int]bool {
	held := map[int]bool{}
	for _, m := range g.members {
		if m.id == self || !m.live() {
			continue
		}
		for _, set := range [][]int{m.current, m.granted, m.revoking} {
			for _, s := range set {
				held[s] = true
			}
		}
	}
	return held
}

// reconcile computes what member m may consume now, given what it reported
// holding (owned plus shards it is still revoking): shards outside its
// target are to be revoked, free target shards are granted, target shards
// another member holds are pending.
func (g *group) reconcile(m *member, held []int, now time.Time, rebalanceTimeout time.Duration) (assigned, pending []int) {
	target := g.target[m.id]
	inTarget := map[int]bool{}
	for _, s := range target {
		inTarget[s] = true
	}
	m.revoking = []int{}
	for _, s := range dedupe(held) {
		if !inTarget[s] {
			m.revoking = append(m.revoking, s)
		}
	}
	owned := map[int]bool{}
	for _, s := range m.current {
		owned[s] = true
	}
	others := g.heldByOthers(m.id)
	assigned, pending = []int{}, []int{}
	for _, s := range target {
		switch {
		case owned[s] || !others[s]:
			assigned = append(assigned, s)
		default:
			pending = append(pending, s)
		}
	}
	m.granted = assigned
	if len(m.revoking) == 0 {
		m.epoch = g.assignmentEpoch
		m.rebalanceDeadline = nil
	} else if m.rebalanceDeadline == nil {
		deadline := now.Add(rebalanceTimeout)
		m.rebalanceDeadline = &deadline
	}
	return assigned, pending
}

func dedupe(s []int) []int {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// release drops a member from the assignment: it no longer counts as live,
// holds nothing the others must wait for, and the target is recomputed. An
// EXPIRED or FENCED member's shards are taken from it; a LEAVING member
// keeps whatever its leave heartbeat still reported.
func (g *group) release(m *member, state string) {
	m.state = state
	if state != MemberLeaving {
		m.current = []int{}
	}
	m.granted, m.revoking = []int{}, []int{}
	m.rebalanceDeadline = nil
	g.bumpMetadata(true)
}

// invariantViolations reports shards more than one live member holds.
func (g *group) invariantViolations() []string {
	owners := map[int][]string{}
	for _, m := range g.liveMembers() {
		for _, s := range dedupe(m.current) {
			owners[s] = append(owners[s], m.id)
		}
	}
	out := []string{}
	for _, s := range slices.Sorted(maps.Keys(owners)) {
		if ids := owners[s]; len(ids) > 1 {
			out = append(out, fmt.Sprintf("shard %d is owned by more than one member: %v", s, ids))
		}
	}
	return out
}
