package coordinator

import (
	"maps"
	"slices"
)

// GroupBackup is one group's stored state as a backup of the store holds it:
// its metadata, migrations and members at the moment BackupGroup copied it.
type GroupBackup struct{ g *group }

// MetadataVersion is the backup's metadataVersion.
func (b GroupBackup) MetadataVersion() int64 { return b.g.metadataVersion }

// BackupGroup copies group {p,g}'s stored state; ok is false when the group
// does not exist.
func (c *Coordinator) BackupGroup(p, g string) (b GroupBackup, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	grp := c.groups[groupKey{p, g}]
	if grp == nil {
		return GroupBackup{}, false
	}
	return GroupBackup{copyGroup(grp)}, true
}

// RestoreGroup replaces the group's stored state with the backup, as a store
// restored from an older copy would: its metadataVersion and epochs go back
// to the backup's (the runbook's metadata-durability signals, CONTRACT §4).
// Members that joined since are unknown to it and must rejoin.
func (c *Coordinator) RestoreGroup(b GroupBackup) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := copyGroup(b.g)
	c.groups[groupKey{g.prefix, g.name}] = g
}

func copyGroup(g *group) *group {
	out := *g
	out.migrations = make([]*migration, len(g.migrations))
	for i, m := range g.migrations {
		mc := *m
		out.migrations[i] = &mc
	}
	out.members = make(map[string]*member, len(g.members))
	for id, m := range g.members {
		mc := *m
		mc.current, mc.granted, mc.revoking = slices.Clone(m.current), slices.Clone(m.granted), slices.Clone(m.revoking)
		mc.progress = slices.Clone(m.progress)
		out.members[id] = &mc
	}
	out.target = maps.Clone(g.target)
	for id, s := range out.target {
		out.target[id] = slices.Clone(s)
	}
	return &out
}

// WithMetadataVersion is the backup with its metadataVersion set to v and
// everything else kept: a corrupted copy, whose version counter no longer
// matches its epochs. No conformant server produces it (every change that
// moves the epochs moves the version too); tests use it for the metadata
// guard's epoch rule.
func (b GroupBackup) WithMetadataVersion(v int64) GroupBackup {
	g := copyGroup(b.g)
	g.metadataVersion = v
	return GroupBackup{g}
}

// Migrating reports whether the group has an active migration (the group's
// activeMigration is not null), as of the backup.
func (b GroupBackup) Migrating() bool { return b.g.activeID != "" }
