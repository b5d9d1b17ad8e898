package coordinator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// A store fixture is every group of the store as JSON: what a test saves
// next to a Terraform state it wrote (SaveGroups) and loads into a fresh
// coordinator before a later build reads that state (LoadGroups), so the
// group records, their versions, epochs and migrations (ids included) are
// the ones the state recorded. Members are not part of it: a fixture is
// taken of groups without consumers, and SaveGroups refuses any other.

// fixtureVersion is the format's version; LoadGroups refuses any other.
const fixtureVersion = 1

type fixtureStore struct {
	Version int            `json:"version"`
	Groups  []fixtureGroup `json:"groups"`
}

type fixtureGroup struct {
	StreamPrefix    string             `json:"streamPrefix"`
	ConsumerGroup   string             `json:"consumerGroup"`
	GroupEpoch      int64              `json:"groupEpoch"`
	AssignmentEpoch int64              `json:"assignmentEpoch"`
	MetadataVersion int64              `json:"metadataVersion"`
	ShardCount      int                `json:"shardCount"`
	ActiveID        string             `json:"activeReshardingId,omitempty"`
	Migrations      []fixtureMigration `json:"migrations"`
}

type fixtureMigration struct {
	ID        string    `json:"reshardingId"`
	From      int       `json:"fromShardCount"`
	To        int       `json:"toShardCount"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// SaveGroups returns every group of the store as a fixture, in prefix and
// name order. It fails when a group has members (live or not).
func (c *Coordinator) SaveGroups() ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := fixtureStore{Version: fixtureVersion, Groups: []fixtureGroup{}}
	for _, g := range c.sortedGroups() {
		if len(g.members) > 0 {
			return nil, fmt.Errorf("group %q of stream prefix %q has %d member(s): a store fixture holds groups without members", g.name, g.prefix, len(g.members))
		}
		fg := fixtureGroup{
			StreamPrefix: g.prefix, ConsumerGroup: g.name, GroupEpoch: g.groupEpoch, AssignmentEpoch: g.assignmentEpoch,
			MetadataVersion: g.metadataVersion, ShardCount: g.shardCount, ActiveID: g.activeID, Migrations: []fixtureMigration{},
		}
		for _, m := range g.migrations {
			fg.Migrations = append(fg.Migrations, fixtureMigration{ID: m.id, From: m.from, To: m.to, State: m.state,
				CreatedAt: m.createdAt.UTC(), UpdatedAt: m.updatedAt.UTC()})
		}
		out.Groups = append(out.Groups, fg)
	}
	return json.MarshalIndent(out, "", "  ")
}

// LoadGroups replaces every group of the store with the fixture's, as a
// store restored from that copy would hold them; the coordinator's own
// Numbering applies to the changes that follow. It fails, changing
// nothing, on a fixture it cannot read.
func (c *Coordinator) LoadGroups(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var in fixtureStore
	if err := dec.Decode(&in); err != nil {
		return fmt.Errorf("read the store fixture: %w", err)
	}
	if in.Version != fixtureVersion {
		return fmt.Errorf("store fixture version %d, want %d", in.Version, fixtureVersion)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	groups := map[groupKey]*group{}
	for _, fg := range in.Groups {
		k := groupKey{fg.StreamPrefix, fg.ConsumerGroup}
		if groups[k] != nil {
			return fmt.Errorf("store fixture: group %q of stream prefix %q appears twice", fg.ConsumerGroup, fg.StreamPrefix)
		}
		g := newGroup(fg.StreamPrefix, fg.ConsumerGroup, fg.ShardCount, c.opts.Numbering)
		g.groupEpoch, g.assignmentEpoch, g.metadataVersion, g.activeID = fg.GroupEpoch, fg.AssignmentEpoch, fg.MetadataVersion, fg.ActiveID
		for _, fm := range fg.Migrations {
			g.migrations = append(g.migrations, &migration{id: fm.ID, from: fm.From, to: fm.To, state: fm.State,
				createdAt: fm.CreatedAt, updatedAt: fm.UpdatedAt})
		}
		if g.activeID != "" && g.active() == nil {
			return fmt.Errorf("store fixture: group %q of stream prefix %q names active migration %q, which it does not hold",
				fg.ConsumerGroup, fg.StreamPrefix, g.activeID)
		}
		groups[k] = g
	}
	c.groups = groups
	return nil
}
