package coordinator

import (
	"maps"
	"slices"
)

// GroupBackup is a copy of one group's stored state, as a backup of the
// coordinator's store holds it.
type GroupBackup struct{ g *group }

// MetadataVersion is the group's metadataVersion in the backup.
func (b *GroupBackup) MetadataVersion() int64 { return b.g.metadataVersion }

// BackupGroup copies group {p, g} as it is stored now (decoded names); ok is
// false when there is no such group.
func (c *Coordinator) BackupGroup(p, g string) (b *GroupBackup, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	grp, ok := c.groups[groupKey{p, g}]
	if !ok {
		return nil, false
	}
	return &GroupBackup{g: grp.clone()}, true
}

// RestoreGroup puts a backup back in place of the group's current state, as
// an operator restoring the store from an older copy would: its
// metadataVersion, shard count, migrations and members go back to the
// backup's, and whatever happened since (a migration started later, say) is
// unknown to the coordinator again (CONTRACT §4: a lower metadataVersion
// comes from a group deleted and created again, or a store restored).
func (c *Coordinator) RestoreGroup(b *GroupBackup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	restored := b.g.clone()
	c.groups[groupKey{restored.prefix, restored.name}] = restored
}

func (g *group) clone() *group {
	cp := *g
	cp.migrations = make([]*migration, len(g.migrations))
	for i, m := range g.migrations {
		mc := *m
		cp.migrations[i] = &mc
	}
	cp.members = make(map[string]*member, len(g.members))
	for id, m := range g.members {
		mc := *m
		mc.current, mc.granted, mc.revoking = slices.Clone(m.current), slices.Clone(m.granted), slices.Clone(m.revoking)
		mc.progress = slices.Clone(m.progress)
		cp.members[id] = &mc
	}
	cp.target = maps.Clone(g.target)
	for id, shards := range cp.target {
		cp.target[id] = slices.Clone(shards)
	}
	return &cp
}
