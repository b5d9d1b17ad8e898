package client

import (
	"encoding/json"
	"time"
)

// GroupState is the coordinator's group assignment state.
type GroupState string

// Group states. ASSIGNING only exists in the middle of a server-side
// computation, so a client never observes it.
const (
	GroupEmpty       GroupState = "EMPTY"
	GroupAssigning   GroupState = "ASSIGNING"
	GroupReconciling GroupState = "RECONCILING"
	GroupStable      GroupState = "STABLE"
)

// MigrationState is the state of one resharding migration.
type MigrationState string

// Migration states. ROLLING_BACK exists in the server's enum but is never
// set: a rollback moves an ACTIVE migration straight to ROLLED_BACK.
const (
	MigrationPreparing   MigrationState = "PREPARING"
	MigrationActive      MigrationState = "ACTIVE"
	MigrationDraining    MigrationState = "DRAINING"
	MigrationDeprecated  MigrationState = "DEPRECATED"
	MigrationRollingBack MigrationState = "ROLLING_BACK"
	MigrationRolledBack  MigrationState = "ROLLED_BACK"
)

// NoopReshardingID is the reshardingId of the migration a scale returns for a
// group whose shard count already equals the target. It is never stored, so
// GetMigration and RollbackMigration answer 404 MIGRATION_NOT_FOUND for it.
const NoopReshardingID = "noop"

// MemberState is the lifecycle state of a consumer group member.
type MemberState string

// Member states. Only STARTING and ACTIVE count as live (they block a
// non-forced delete and keep scale-outs from finishing).
const (
	MemberStarting MemberState = "STARTING"
	MemberActive   MemberState = "ACTIVE"
	MemberLeaving  MemberState = "LEAVING"
	MemberExpired  MemberState = "EXPIRED"
	MemberFenced   MemberState = "FENCED"
)

// HeartbeatStatus is the outcome of a member heartbeat; the HTTP status is 200
// for all of them.
type HeartbeatStatus string

// Heartbeat outcomes.
const (
	HeartbeatOK                  HeartbeatStatus = "OK"
	HeartbeatRetry               HeartbeatStatus = "RETRY"
	HeartbeatSyncMetadata        HeartbeatStatus = "SYNC_METADATA"
	HeartbeatRevokePending       HeartbeatStatus = "REVOKE_PENDING"
	HeartbeatUnknownMemberID     HeartbeatStatus = "UNKNOWN_MEMBER_ID"
	HeartbeatFencedMemberEpoch   HeartbeatStatus = "FENCED_MEMBER_EPOCH"
	HeartbeatUnsupportedProtocol HeartbeatStatus = "UNSUPPORTED_PROTOCOL"
	HeartbeatInvalidRequest      HeartbeatStatus = "INVALID_REQUEST"
)

// Migration is one resharding of one group. These six fields are all the
// server returns; there is no drain/revoke progress.
type Migration struct {
	ReshardingID   string         `json:"reshardingId"`
	FromShardCount int32          `json:"fromShardCount"`
	ToShardCount   int32          `json:"toShardCount"`
	State          MigrationState `json:"state"`
	CreatedAt      Time           `json:"createdAt"`
	UpdatedAt      Time           `json:"updatedAt"`
}

// Finished reports whether the migration reached a terminal state
// (DEPRECATED or ROLLED_BACK). A nil migration counts as finished because a
// group's activeMigration is null exactly when nothing is in progress.
func (m *Migration) Finished() bool {
	if m == nil {
		return true
	}
	return m.State == MigrationDeprecated || m.State == MigrationRolledBack
}

// Group is the coordinator's GroupResponse for one {streamPrefix, consumerGroup}.
type Group struct {
	StreamPrefix             string           `json:"streamPrefix"`
	ConsumerGroup            string           `json:"consumerGroup"`
	State                    GroupState       `json:"state"`
	GroupEpoch               int64            `json:"groupEpoch"`
	AssignmentEpoch          int64            `json:"assignmentEpoch"`
	MetadataVersion          int64            `json:"metadataVersion"`
	ShardCount               int32            `json:"shardCount"`
	ActiveMigration          *Migration       `json:"activeMigration"`
	TargetAssignmentSummary  map[string]int32 `json:"targetAssignmentSummary"`
	CurrentAssignmentSummary map[string]int32 `json:"currentAssignmentSummary"`
}

// Shard is one entry of producer routing.
type Shard struct {
	ShardIndex int32  `json:"shardIndex"`
	StreamKey  string `json:"streamKey"`
	RedisSlot  int32  `json:"redisSlot"`
}

// ProducerRouting is what producers use to find shard stream keys. It switches
// to the new shard count as soon as a scale answers 202, so it says nothing
// about whether the migration finished.
type ProducerRouting struct {
	StreamPrefix     string  `json:"streamPrefix"`
	ConsumerGroup    string  `json:"consumerGroup"`
	MetadataVersion  int64   `json:"metadataVersion"`
	ShardCount       int32   `json:"shardCount"`
	StreamKeyPattern string  `json:"streamKeyPattern"`
	Shards           []Shard `json:"shards"`
}

// CreateStreamResponse answers POST /streams/{p}; the only group created is
// {p, p}.
type CreateStreamResponse struct {
	StreamPrefix    string `json:"streamPrefix"`
	ShardCount      int32  `json:"shardCount"`
	MetadataVersion int64  `json:"metadataVersion"`
}

// StreamScaleResponse answers POST /streams/{p}/scale. Migrations are in the
// same (name) order as AffectedConsumerGroups.
type StreamScaleResponse struct {
	StreamPrefix           string      `json:"streamPrefix"`
	TargetShardCount       int32       `json:"targetShardCount"`
	AffectedConsumerGroups []string    `json:"affectedConsumerGroups"`
	Migrations             []Migration `json:"migrations"`
}

// LoginResponse answers POST /auth/login. AccessToken is a secret.
type LoginResponse struct {
	AccessToken      string   `json:"accessToken"`
	TokenType        string   `json:"tokenType"`
	ExpiresAt        Time     `json:"expiresAt"`
	ExpiresInSeconds int64    `json:"expiresInSeconds"`
	Roles            []string `json:"roles"`
}

// Health answers GET /monitoring/health. Status is UP or DEGRADED (never DOWN).
type Health struct {
	Status        string `json:"status"`
	CoordinatorID string `json:"coordinatorId"`
	Redis         string `json:"redis"`
	Loop          string `json:"loop"`
}

// Session answers GET /monitoring/session.
type Session struct {
	Authenticated bool     `json:"authenticated"`
	Username      string   `json:"username"`
	Roles         []string `json:"roles"`
}

// Compatibility answers GET /monitoring/compatibility.
type Compatibility struct {
	CurrentCoordinationVersion    int32                 `json:"currentCoordinationVersion"`
	SupportedCoordinationVersions VersionRange          `json:"supportedCoordinationVersions"`
	CoordinationVersions          []CoordinationVersion `json:"coordinationVersions"`
}

// VersionRange is an inclusive range of coordination protocol versions.
type VersionRange struct {
	Min int32 `json:"min"`
	Max int32 `json:"max"`
}

// CoordinationVersion describes one coordination protocol version. The server
// version objects and timing defaults are kept raw because their exact
// serialization (Java Durations, nullable qualifiers) is not pinned down.
type CoordinationVersion struct {
	Version               int32           `json:"version"`
	Status                string          `json:"status"`
	IntroducedIn          json.RawMessage `json:"introducedIn"`
	DeprecatedIn          json.RawMessage `json:"deprecatedIn"`
	MinimumSupportedUntil json.RawMessage `json:"minimumSupportedUntil"`
	RemovedIn             json.RawMessage `json:"removedIn"`
	TimingDefaults        json.RawMessage `json:"timingDefaults"`
}

// ShardID identifies a shard of a group.
type ShardID struct {
	ShardIndex int32 `json:"shardIndex"`
}

// Member is one consumer group member as reported by monitoring.
type Member struct {
	MemberID              string          `json:"memberId"`
	MemberName            string          `json:"memberName"`
	State                 MemberState     `json:"state"`
	MemberEpoch           int64           `json:"memberEpoch"`
	MetadataVersion       int64           `json:"metadataVersion"`
	RuntimeMaxConcurrency int32           `json:"runtimeMaxConcurrency"`
	ActiveConsumerWorkers int32           `json:"activeConsumerWorkers"`
	CurrentAssignment     []ShardID       `json:"currentAssignment"`
	GrantedAssignment     []ShardID       `json:"grantedAssignment"`
	Revoking              []ShardID       `json:"revoking"`
	LastHeartbeatAt       Time            `json:"lastHeartbeatAt"`
	MemberLeaseExpiresAt  Time            `json:"memberLeaseExpiresAt"`
	RebalanceTimeoutMs    int64           `json:"rebalanceTimeoutMs"`
	RebalanceDeadlineAt   Time            `json:"rebalanceDeadlineAt"`
	ShardProgress         json.RawMessage `json:"shardProgress"`
}

// Live reports whether the member counts as live the way the coordinator
// counts it: ACTIVE or STARTING with an unexpired lease. Without a lease
// timestamp the state alone decides.
func (m Member) Live(now time.Time) bool {
	if m.State != MemberActive && m.State != MemberStarting {
		return false
	}
	return m.MemberLeaseExpiresAt.IsZero() || now.Before(m.MemberLeaseExpiresAt.Time)
}

// Assignments answers GET /monitoring/streams/{p}/groups/{g}/assignments.
// Maps are keyed by memberId; RevokeProgress only lists members still revoking.
type Assignments struct {
	TargetAssignment    map[string][]ShardID `json:"targetAssignment"`
	CurrentAssignments  map[string][]ShardID `json:"currentAssignments"`
	RevokeProgress      map[string][]ShardID `json:"revokeProgress"`
	InvariantViolations []string             `json:"invariantViolations"`
}

// ConsumptionProgress is one member's progress on one shard.
type ConsumptionProgress struct {
	StreamPrefix    string      `json:"streamPrefix"`
	ConsumerGroup   string      `json:"consumerGroup"`
	MemberID        string      `json:"memberId"`
	MemberName      string      `json:"memberName"`
	MemberState     MemberState `json:"memberState"`
	Shard           ShardID     `json:"shard"`
	StreamKey       string      `json:"streamKey"`
	LastDeliveredID string      `json:"lastDeliveredId"`
	LastAckedID     string      `json:"lastAckedId"`
	PendingCount    int64       `json:"pendingCount"`
	UpdatedAt       Time        `json:"updatedAt"`
}

// MigrationHistory is a group's full migration history sorted by createdAt.
// ActiveReshardingID is empty when no migration is active.
type MigrationHistory struct {
	Migrations         []Migration `json:"migrations"`
	ActiveReshardingID string      `json:"activeReshardingId"`
}
