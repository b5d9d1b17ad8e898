package coordinator

import "time"

// Tick runs one background-loop pass now: member leases, revoke deadlines
// and pruning, then one migration step per group. Start runs it every
// TickInterval; tests call it directly.
func (c *Coordinator) Tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for _, g := range c.sortedGroups() {
		c.maintainMembers(g, now)
		c.advanceMigration(g, now)
	}
}

// maintainMembers expires members whose lease ran out, fences members that
// held revoked shards past the rebalance timeout (each a change of
// assignments: version and epochs rise), and prunes EXPIRED, FENCED and empty
// LEAVING members StaleMemberRetention after their last heartbeat (one
// version bump per pass that pruned any, no epoch change).
func (c *Coordinator) maintainMembers(g *group, now time.Time) {
	pruned := false
	for _, m := range g.sortedMembers() {
		switch {
		case m.live() && !now.Before(m.leaseExpires):
			g.release(m, MemberExpired)
		case m.live() && m.rebalanceDeadline != nil && !now.Before(*m.rebalanceDeadline):
			g.release(m, MemberFenced)
		case !m.live() && (m.state != MemberLeaving || len(m.current) == 0) &&
			!now.Before(m.lastHeartbeat.Add(c.opts.StaleMemberRetention)):
			delete(g.members, m.id)
			pruned = true
		}
	}
	if pruned {
		g.bumpMetadata(false)
	}
}

// advanceMigration moves the group's active migration at most one step
// (§7); it runs on every tick and after every heartbeat of the group.
func (c *Coordinator) advanceMigration(g *group, now time.Time) {
	m := g.active()
	if m == nil {
		return
	}
	switch m.state {
	case MigrationActive:
		live := g.liveMembers()
		scaleIn := m.to < m.from
		// With members: wait until every live member holds exactly its
		// target. Without: only a scale-in proceeds, skipping the revoke
		// wait; a scale-out stays ACTIVE until a consumer converges.
		if (len(live) > 0 && g.state() == GroupStable) || (len(live) == 0 && scaleIn) {
			m.state, m.updatedAt = MigrationDraining, now
			g.bumpMetadata(true)
		}
	case MigrationDraining:
		if c.removedShardsHeld(g, m.to) || (m.to < m.from && c.removedShardsUndrained(g, m)) {
			return
		}
		m.state, m.updatedAt = MigrationDeprecated, now
		g.activeID = ""
		g.bumpMetadata(false)
	}
}

// removedShardsHeld reports whether a live member still owns or revokes a
// shard at or above the new count.
func (c *Coordinator) removedShardsHeld(g *group, toShardCount int) bool {
	for _, m := range g.liveMembers() {
		for _, set := range [][]int{m.current, m.revoking} {
			for _, s := range set {
				if s >= toShardCount {
					return true
				}
			}
		}
	}
	return false
}

// removedShardsUndrained stands in for XINFO GROUPS on every removed key
// p:i: any consumer group there with pending or lag blocks completion,
// including groups the coordinator does not manage.
func (c *Coordinator) removedShardsUndrained(g *group, m *migration) bool {
	for i := m.to; i < m.from; i++ {
		if len(c.undrained[shardKey{g.prefix, i}]) > 0 {
			return true
		}
	}
	return false
}

// SetUndrainedShard simulates Redis reporting pending or lag ≠ 0 for
// consumer group g on the removed stream key p:shardIndex. Because the
// server inspects every consumer group on a removed key, backlog of any
// group blocks every scale-in of prefix p that removes that key, in
// DRAINING, until it is cleared with undrained=false.
func (c *Coordinator) SetUndrainedShard(p, g string, shardIndex int, undrained bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := shardKey{p, shardIndex}
	if undrained {
		if c.undrained[k] == nil {
			c.undrained[k] = map[string]bool{}
		}
		c.undrained[k][g] = true
		return
	}
	delete(c.undrained[k], g)
	if len(c.undrained[k]) == 0 {
		delete(c.undrained, k)
	}
}
