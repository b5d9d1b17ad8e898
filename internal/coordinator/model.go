package coordinator

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Group, member and migration states (CONTRACT §4–§7).
const (
	GroupEmpty       = "EMPTY"
	GroupReconciling = "RECONCILING"
	GroupStable      = "STABLE"

	MemberStarting = "STARTING"
	MemberActive   = "ACTIVE"
	MemberLeaving  = "LEAVING"
	MemberExpired  = "EXPIRED"
	MemberFenced   = "FENCED"

	MigrationPreparing  = "PREPARING"
	MigrationActive     = "ACTIVE"
	MigrationDraining   = "DRAINING"
	MigrationDeprecated = "DEPRECATED"
	MigrationRolledBack = "ROLLED_BACK"

	// NoopReshardingID names the never-stored migration of a scale to the
	// current count.
	NoopReshardingID = "noop"
)

// groupKey identifies a group by its decoded names.
type groupKey struct{ prefix, name string }

// shardKey is one physical Redis stream key p:i.
type shardKey struct {
	prefix string
	index  int
}

type group struct {
	prefix, name    string
	groupEpoch      int64
	assignmentEpoch int64
	metadataVersion int64
	shardCount      int
	activeID        string
	migrations      []*migration // creation order
	members         map[string]*member
	target          map[string][]int // live member → target shards
	numbering       Numbering
}

type migration struct {
	id        string
	from, to  int
	state     string
	createdAt time.Time
	updatedAt time.Time
}

type member struct {
	id                string
	name              *string
	state             string
	epoch             int64
	metadataVersion   int64
	maxConcurrency    int64
	available         int64
	current           []int // last reported ownedShards
	granted           []int // last assignedShards sent
	revoking          []int // shards it still holds outside its target
	lastHeartbeat     time.Time
	leaseExpires      time.Time
	rebalanceDeadline *time.Time
	progress          []shardProgress
}

type shardProgress struct {
	Shard           shardID `json:"shard"`
	StreamKey       *string `json:"streamKey"`
	LastDeliveredID *string `json:"lastDeliveredId"`
	LastAckedID     *string `json:"lastAckedId"`
	PendingCount    int64   `json:"pendingCount"`
	UpdatedAt       *string `json:"updatedAt"`
}

func newGroup(prefix, name string, shardCount int, numbering Numbering) *group {
	return &group{
		prefix: prefix, name: name, numbering: numbering,
		groupEpoch: 1, assignmentEpoch: 1, metadataVersion: 1,
		shardCount: shardCount,
		members:    map[string]*member{},
		target:     map[string][]int{},
	}
}

func (g *group) active() *migration {
	if g.activeID == "" {
		return nil
	}
	return g.findMigration(g.activeID)
}

func (g *group) findMigration(id string) *migration {
	for _, m := range g.migrations {
		if m.id == id {
			return m
		}
	}
	return nil
}

func (m *member) live() bool { return m.state == MemberActive || m.state == MemberStarting }

// liveMembers returns ACTIVE and STARTING members sorted by id.
func (g *group) liveMembers() []*member {
	var out []*member
	for _, m := range g.members {
		if m.live() {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b *member) int { return strings.Compare(a.id, b.id) })
	return out
}

func (g *group) sortedMembers() []*member {
	out := make([]*member, 0, len(g.members))
	for _, m := range g.members {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *member) int { return strings.Compare(a.id, b.id) })
	return out
}

// newReshardingID is "reshard-<uuid v4>".
func newReshardingID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("reshard-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// sortedGroups returns every group ordered by prefix, then name.
func (c *Coordinator) sortedGroups() []*group {
	out := make([]*group, 0, len(c.groups))
	for _, g := range c.groups {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *group) int {
		if r := strings.Compare(a.prefix, b.prefix); r != 0 {
			return r
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

// groupsOfPrefix returns the groups of one stream prefix in name order.
func (c *Coordinator) groupsOfPrefix(prefix string) []*group {
	var out []*group
	for _, g := range c.sortedGroups() {
		if g.prefix == prefix {
			out = append(out, g)
		}
	}
	return out
}
