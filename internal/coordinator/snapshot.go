package coordinator

import "slices"

// GroupSnapshot is a copy of one group's stored state (shard count, versions
// and epochs, migrations, members), as a backup of the coordinator's store
// holds it. RestoreSnapshot puts it back: the group's metadataVersion then
// goes backwards, as after a restore of the real server's Redis from an old
// backup. The workflow campaign uses it for the metadata regression the
// guard exists for.
type GroupSnapshot struct {
	key groupKey
	g   *group
}

// StreamPrefix and ConsumerGroup name the group.
func (b *GroupSnapshot) StreamPrefix() string  { return b.key.prefix }
func (b *GroupSnapshot) ConsumerGroup() string { return b.key.name }

// MetadataVersion is the group's metadataVersion when it was copied.
func (b *GroupSnapshot) MetadataVersion() int64 { return b.g.metadataVersion }

// SnapshotGroup copies group {p,g} (decoded names); false when it does not
// exist.
func (c *Coordinator) SnapshotGroup(p, g string) (*GroupSnapshot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := groupKey{p, g}
	grp, ok := c.groups[k]
	if !ok {
		return nil, false
	}
	return &GroupSnapshot{key: k, g: snapshotCopy(grp)}, true
}

// RestoreSnapshot replaces the group's stored state with the snapshot,
// creating the group again if it was deleted since. Members the snapshot
// does not hold are unknown to the coordinator afterwards (they rejoin),
// those it holds are as they were when it was taken.
func (c *Coordinator) RestoreSnapshot(b *GroupSnapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.groups[b.key] = snapshotCopy(b.g)
}

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

// snapshotCopy is a deep copy of the group's maps and slices (fields added
// later are copied as values).
func snapshotCopy(g *group) *group {
	cp := *g
	cp.migrations = make([]*migration, 0, len(g.migrations))
	for _, m := range g.migrations {
		mc := *m
		cp.migrations = append(cp.migrations, &mc)
	}
	cp.members = make(map[string]*member, len(g.members))
	for id, m := range g.members {
		mc := *m
		mc.current, mc.granted, mc.revoking = slices.Clone(m.current), slices.Clone(m.granted), slices.Clone(m.revoking)
		mc.progress = slices.Clone(m.progress)
		if m.rebalanceDeadline != nil {
			d := *m.rebalanceDeadline
			mc.rebalanceDeadline = &d
		}
		cp.members[id] = &mc
	}
	cp.target = make(map[string][]int, len(g.target))
	for id, s := range g.target {
		cp.target[id] = slices.Clone(s)
	}
	return &cp
}
