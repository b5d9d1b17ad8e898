package coordinator

// ExpireMember ends the lease of member id of group {p,g} now, as the
// background loop does once a silent member's lease ran out, without waiting
// for MemberLeaseTTL. It reports whether the member was live.
func (c *Coordinator) ExpireMember(p, g, id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	grp, ok := c.groups[groupKey{p, g}]
	if !ok {
		return false
	}
	m, ok := grp.members[id]
	if !ok || !m.live() {
		return false
	}
	m.leaseExpires = c.now()
	now := c.now()
	c.maintainMembers(grp, now)
	c.advanceMigration(grp, now)
	return true
}
