package coordinator

import (
	"slices"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

// JSON shapes of the API (CONTRACT §4–§6). Slices are always non-nil so they
// serialize as [] like the server's Kotlin lists.

type shardID struct {
	ShardIndex int `json:"shardIndex"`
}

func shardIDs(indexes []int) []shardID {
	s := slices.Clone(indexes)
	slices.Sort(s)
	out := make([]shardID, len(s))
	for i, v := range s {
		out[i] = shardID{ShardIndex: v}
	}
	return out
}

type migrationView struct {
	ReshardingID   string  `json:"reshardingId"`
	FromShardCount int     `json:"fromShardCount"`
	ToShardCount   int     `json:"toShardCount"`
	State          string  `json:"state"`
	CreatedAt      instant `json:"createdAt"`
	UpdatedAt      instant `json:"updatedAt"`
}

func (m *migration) view() migrationView {
	return migrationView{
		ReshardingID: m.id, FromShardCount: m.from, ToShardCount: m.to, State: m.state,
		CreatedAt: instant(m.createdAt), UpdatedAt: instant(m.updatedAt),
	}
}

type groupView struct {
	StreamPrefix             string         `json:"streamPrefix"`
	ConsumerGroup            string         `json:"consumerGroup"`
	State                    string         `json:"state"`
	GroupEpoch               int64          `json:"groupEpoch"`
	AssignmentEpoch          int64          `json:"assignmentEpoch"`
	MetadataVersion          int64          `json:"metadataVersion"`
	ShardCount               int            `json:"shardCount"`
	ActiveMigration          *migrationView `json:"activeMigration"`
	TargetAssignmentSummary  map[string]int `json:"targetAssignmentSummary"`
	CurrentAssignmentSummary map[string]int `json:"currentAssignmentSummary"`
}

func (g *group) view() groupView {
	v := groupView{
		StreamPrefix: g.prefix, ConsumerGroup: g.name, State: g.state(),
		GroupEpoch: g.groupEpoch, AssignmentEpoch: g.assignmentEpoch, MetadataVersion: g.metadataVersion,
		ShardCount:               g.shardCount,
		TargetAssignmentSummary:  map[string]int{},
		CurrentAssignmentSummary: map[string]int{},
	}
	if m := g.active(); m != nil {
		mv := m.view()
		v.ActiveMigration = &mv
	}
	for id, shards := range g.target {
		v.TargetAssignmentSummary[id] = len(shards)
	}
	for id, m := range g.members {
		v.CurrentAssignmentSummary[id] = len(m.current)
	}
	return v
}

type routingShard struct {
	ShardIndex int    `json:"shardIndex"`
	StreamKey  string `json:"streamKey"`
	RedisSlot  int    `json:"redisSlot"`
}

type routingView struct {
	StreamPrefix     string         `json:"streamPrefix"`
	ConsumerGroup    string         `json:"consumerGroup"`
	MetadataVersion  int64          `json:"metadataVersion"`
	ShardCount       int            `json:"shardCount"`
	StreamKeyPattern string         `json:"streamKeyPattern"`
	Shards           []routingShard `json:"shards"`
}

func (g *group) routingView() routingView {
	v := routingView{
		StreamPrefix: g.prefix, ConsumerGroup: g.name, MetadataVersion: g.metadataVersion,
		ShardCount: g.shardCount, StreamKeyPattern: routing.StreamKeyPattern(g.prefix),
		Shards: make([]routingShard, 0, g.shardCount),
	}
	for i := range g.shardCount {
		key := routing.StreamKey(g.prefix, i)
		v.Shards = append(v.Shards, routingShard{ShardIndex: i, StreamKey: key, RedisSlot: routing.Slot(key)})
	}
	return v
}

type memberView struct {
	MemberID              string          `json:"memberId"`
	MemberName            *string         `json:"memberName"`
	State                 string          `json:"state"`
	MemberEpoch           int64           `json:"memberEpoch"`
	MetadataVersion       int64           `json:"metadataVersion"`
	RuntimeMaxConcurrency int64           `json:"runtimeMaxConcurrency"`
	ActiveConsumerWorkers int64           `json:"activeConsumerWorkers"`
	CurrentAssignment     []shardID       `json:"currentAssignment"`
	GrantedAssignment     []shardID       `json:"grantedAssignment"`
	Revoking              []shardID       `json:"revoking"`
	LastHeartbeatAt       instant         `json:"lastHeartbeatAt"`
	MemberLeaseExpiresAt  instant         `json:"memberLeaseExpiresAt"`
	RebalanceTimeoutMs    int64           `json:"rebalanceTimeoutMs"`
	RebalanceDeadlineAt   *instant        `json:"rebalanceDeadlineAt"`
	ShardProgress         []shardProgress `json:"shardProgress"`
}

func (c *Coordinator) memberView(m *member) memberView {
	return memberView{
		MemberID: m.id, MemberName: m.name, State: m.state, MemberEpoch: m.epoch,
		MetadataVersion:       m.metadataVersion,
		RuntimeMaxConcurrency: m.maxConcurrency,
		// Workers busy = capacity not reported as available.
		ActiveConsumerWorkers: max(m.maxConcurrency-m.available, 0),
		CurrentAssignment:     shardIDs(m.current),
		GrantedAssignment:     shardIDs(m.granted),
		Revoking:              shardIDs(m.revoking),
		LastHeartbeatAt:       instant(m.lastHeartbeat),
		MemberLeaseExpiresAt:  instant(m.leaseExpires),
		RebalanceTimeoutMs:    c.opts.RebalanceTimeout.Milliseconds(),
		RebalanceDeadlineAt:   instantPtr(m.rebalanceDeadline),
		ShardProgress:         append([]shardProgress{}, m.progress...),
	}
}
