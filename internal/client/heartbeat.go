package client

import (
	"context"
	"errors"
	"net/http"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/blank"
)

// CoordinationProtocolVersion is the only coordination protocol version the
// coordinator supports (range 1..1).
const CoordinationProtocolVersion = 1

// HeartbeatRequest is a member heartbeat. A fake member joins with
// MemberEpoch 0, MetadataVersion 0 and no owned shards, then echoes the last
// response's epochs and assigned shards, and leaves with MemberEpoch -1.
type HeartbeatRequest struct {
	ProtocolVersion         int32                      `json:"protocolVersion"`
	RequestID               string                     `json:"requestId"`
	MemberID                string                     `json:"memberId"`
	MemberName              string                     `json:"memberName"`
	MemberEpoch             int64                      `json:"memberEpoch"`
	MetadataVersion         int64                      `json:"metadataVersion"`
	RuntimeConsumerCapacity RuntimeConsumerCapacity    `json:"runtimeConsumerCapacity"`
	OwnedShards             []ShardID                  `json:"ownedShards"`
	RevokingShards          []RevokingShard            `json:"revokingShards"`
	ShardProgress           []ShardConsumptionProgress `json:"shardProgress"`
}

// RuntimeConsumerCapacity is a member's declared concurrency.
type RuntimeConsumerCapacity struct {
	RuntimeMaxConcurrency int32 `json:"runtimeMaxConcurrency"`
	AvailableConcurrency  int32 `json:"availableConcurrency"`
}

// RevokingShardState is the progress of a member giving up a shard.
type RevokingShardState string

// Revoking shard states.
const (
	RevokingShardRevoking RevokingShardState = "REVOKING"
	RevokingShardDraining RevokingShardState = "DRAINING"
	RevokingShardRevoked  RevokingShardState = "REVOKED"
)

// RevokingShard reports one shard a member is giving up.
type RevokingShard struct {
	Shard    ShardID            `json:"shard"`
	State    RevokingShardState `json:"state"`
	InFlight int32              `json:"inFlight"`
	AckedAt  Time               `json:"ackedAt"`
}

// ShardConsumptionProgress reports a member's progress on one shard.
type ShardConsumptionProgress struct {
	Shard           ShardID `json:"shard"`
	StreamKey       string  `json:"streamKey"`
	LastDeliveredID string  `json:"lastDeliveredId"`
	LastAckedID     string  `json:"lastAckedId"`
	PendingCount    int64   `json:"pendingCount"`
	UpdatedAt       Time    `json:"updatedAt"`
}

// HeartbeatResponse answers a heartbeat; the outcome is in Status.
type HeartbeatResponse struct {
	ResponseTo          string          `json:"responseTo"`
	Status              HeartbeatStatus `json:"status"`
	MemberID            string          `json:"memberId"`
	MemberEpoch         int64           `json:"memberEpoch"`
	HeartbeatIntervalMs int64           `json:"heartbeatIntervalMs"`
	RebalanceTimeoutMs  int64           `json:"rebalanceTimeoutMs"`
	GroupEpoch          int64           `json:"groupEpoch"`
	AssignmentEpoch     int64           `json:"assignmentEpoch"`
	MetadataVersion     int64           `json:"metadataVersion"`
	Assignment          AssignmentView  `json:"assignment"`
}

// AssignmentView is the assignment a heartbeat response hands a member.
type AssignmentView struct {
	AssignedShards  []ShardID `json:"assignedShards"`
	PendingShards   []ShardID `json:"pendingShards"`
	MetadataVersion int64     `json:"metadataVersion"`
}

// heartbeatBody is the wire form: every list is sent (as [] when empty) and a
// blank memberName is sent as null, because Kotlin rejects null for
// non-nullable lists.
type heartbeatBody struct {
	ProtocolVersion         int32                      `json:"protocolVersion"`
	RequestID               string                     `json:"requestId"`
	MemberID                string                     `json:"memberId"`
	MemberName              *string                    `json:"memberName"`
	MemberEpoch             int64                      `json:"memberEpoch"`
	MetadataVersion         int64                      `json:"metadataVersion"`
	RuntimeConsumerCapacity RuntimeConsumerCapacity    `json:"runtimeConsumerCapacity"`
	OwnedShards             []ShardID                  `json:"ownedShards"`
	RevokingShards          []RevokingShard            `json:"revokingShards"`
	ShardProgress           []ShardConsumptionProgress `json:"shardProgress"`
}

// Heartbeat sends one member heartbeat (POST
// /streams/{p}/groups/{g}/members/{memberId}/heartbeat). It is meant for fake
// consumers in tests: it is neither audited nor rate limited, and the HTTP
// status is 200 for every outcome except validation failures. A zero
// ProtocolVersion is sent as 1 and a blank RequestID is generated.
func (c *Client) Heartbeat(ctx context.Context, p, g string, req HeartbeatRequest) (*HeartbeatResponse, error) {
	if blank.Body(req.MemberID) {
		return nil, errors.New("coordinator heartbeat: memberId must not be blank")
	}
	body := heartbeatBody{
		ProtocolVersion:         req.ProtocolVersion,
		RequestID:               req.RequestID,
		MemberID:                req.MemberID,
		MemberEpoch:             req.MemberEpoch,
		MetadataVersion:         req.MetadataVersion,
		RuntimeConsumerCapacity: req.RuntimeConsumerCapacity,
		OwnedShards:             nonNil(req.OwnedShards),
		RevokingShards:          nonNil(req.RevokingShards),
		ShardProgress:           nonNil(req.ShardProgress),
	}
	if body.ProtocolVersion == 0 {
		body.ProtocolVersion = CoordinationProtocolVersion
	}
	if blank.Body(body.RequestID) {
		body.RequestID = c.NewRequestID("heartbeat")
	}
	if req.MemberName != "" {
		name := req.MemberName
		body.MemberName = &name
	}
	path, err := groupPath(p, g, "members", req.MemberID, "heartbeat")
	if err != nil {
		return nil, err
	}
	var out HeartbeatResponse
	err = c.do(ctx, &call{
		method:    http.MethodPost,
		path:      path,
		operation: "heartbeat",
		requestID: body.RequestID,
		body:      body,
		// Re-sending a heartbeat that may have been processed would replay an
		// epoch; let the fake member's own loop decide.
		resend: resendNever,
		role:   "MEMBER",
		out:    &out,
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
