package coordinator

import (
	"fmt"
	"net/http"
	"time"
)

// Heartbeat statuses (YAML HeartbeatStatus).
const (
	HeartbeatOK                  = "OK"
	HeartbeatRetry               = "RETRY"
	HeartbeatSyncMetadata        = "SYNC_METADATA"
	HeartbeatRevokePending       = "REVOKE_PENDING"
	HeartbeatUnknownMemberID     = "UNKNOWN_MEMBER_ID"
	HeartbeatFencedMemberEpoch   = "FENCED_MEMBER_EPOCH"
	HeartbeatUnsupportedProtocol = "UNSUPPORTED_PROTOCOL"
	HeartbeatInvalidRequest      = "INVALID_REQUEST"

	// coordinationProtocolVersion is the only protocol version (range 1..1).
	coordinationProtocolVersion = 1
	// leaveEpoch is the member epoch a leaving member sends.
	leaveEpoch = -1
)

type heartbeatRequest struct {
	protocolVersion int64
	requestID       string
	memberID        string
	memberName      *string
	memberEpoch     int64
	metadataVersion int64
	maxConcurrency  int64
	available       int64
	owned           []int
	stillRevoking   []int // revokingShards not yet REVOKED
	progress        []shardProgress
}

type assignmentView struct {
	AssignedShards  []shardID `json:"assignedShards"`
	PendingShards   []shardID `json:"pendingShards"`
	MetadataVersion int64     `json:"metadataVersion"`
}

type heartbeatResponse struct {
	ResponseTo          string         `json:"responseTo"`
	Status              string         `json:"status"`
	MemberID            string         `json:"memberId"`
	MemberEpoch         int64          `json:"memberEpoch"`
	HeartbeatIntervalMs int64          `json:"heartbeatIntervalMs"`
	RebalanceTimeoutMs  int64          `json:"rebalanceTimeoutMs"`
	GroupEpoch          int64          `json:"groupEpoch"`
	AssignmentEpoch     int64          `json:"assignmentEpoch"`
	MetadataVersion     int64          `json:"metadataVersion"`
	Assignment          assignmentView `json:"assignment"`
}

// bindHeartbeat binds and validates the body; false means the 400 has been
// written. Validation failures are the one case where a heartbeat is not 200.
func (x *exchange) bindHeartbeat() (heartbeatRequest, bool) {
	var req heartbeatRequest
	f, ok := x.requiredBody()
	if !ok {
		return req, false
	}
	req.protocolVersion = f.reqInt("protocolVersion", 32)
	req.requestID, req.memberID = f.str("requestId"), f.str("memberId")
	if name, ok := f.optStr("memberName"); ok {
		req.memberName = &name
	}
	req.memberEpoch = f.reqInt("memberEpoch", 64)
	req.metadataVersion = f.reqInt("metadataVersion", 64)
	capacity := f.object("runtimeConsumerCapacity")
	if capacity == nil {
		f.markUnreadable()
	} else {
		req.maxConcurrency = capacity.reqInt("runtimeMaxConcurrency", 32)
		req.available = capacity.reqInt("availableConcurrency", 32)
	}
	var v violations
	for i, s := range f.list("ownedShards") {
		idx := s.reqInt("shardIndex", 32)
		v.min(fmt.Sprintf("ownedShards[%d].shardIndex", i), &idx, 0)
		req.owned = append(req.owned, int(idx))
	}
	for _, r := range f.list("revokingShards") {
		shard := r.object("shard")
		state, _ := r.optStr("state")
		r.optInt("inFlight", 32)
		r.optStr("ackedAt")
		switch {
		case shard == nil:
			r.markUnreadable()
		case state == "REVOKED":
		case state == "REVOKING" || state == "DRAINING" || state == "":
			req.stillRevoking = append(req.stillRevoking, int(shard.reqInt("shardIndex", 32)))
		default:
			r.markUnreadable() // not a RevokingShardState
		}
	}
	req.progress = bindProgress(f.list("shardProgress"))
	if !x.bound(f) {
		return req, false
	}
	v.min("protocolVersion", &req.protocolVersion, 1)
	v.notBlank("requestId", req.requestID)
	v.notBlank("memberId", req.memberID)
	v.min("runtimeConsumerCapacity.runtimeMaxConcurrency", &req.maxConcurrency, 1)
	v.min("runtimeConsumerCapacity.availableConcurrency", &req.available, 0)
	if e := v.err(); e != nil {
		x.fail(e)
		return req, false
	}
	return req, true
}

func bindProgress(items []*fields) []shardProgress {
	out := []shardProgress{}
	for _, p := range items {
		var sp shardProgress
		if shard := p.object("shard"); shard != nil {
			sp.Shard.ShardIndex = int(shard.reqInt("shardIndex", 32))
		} else {
			p.markUnreadable()
		}
		for name, dst := range map[string]**string{"streamKey": &sp.StreamKey, "lastDeliveredId": &sp.LastDeliveredID, "lastAckedId": &sp.LastAckedID} {
			if s, ok := p.optStr(name); ok {
				*dst = &s
			}
		}
		if n := p.optInt("pendingCount", 64); n != nil {
			sp.PendingCount = *n
		}
		if s, ok := p.optStr("updatedAt"); ok {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				p.markUnreadable() // Jackson cannot read it as an Instant
			} else {
				formatted := formatInstant(t)
				sp.UpdatedAt = &formatted
			}
		}
		out = append(out, sp)
	}
	return out
}

// heartbeat is the member protocol (§6). It always answers 200 with the
// outcome in status, except for validation failures.
func (x *exchange) heartbeat() {
	req, ok := x.bindHeartbeat()
	if !ok {
		return
	}
	c := x.c
	pathID := x.m.vars["memberId"]
	resp := heartbeatResponse{
		ResponseTo: req.requestID, MemberID: pathID, MemberEpoch: req.memberEpoch,
		HeartbeatIntervalMs: c.opts.HeartbeatInterval.Milliseconds(),
		RebalanceTimeoutMs:  c.opts.RebalanceTimeout.Milliseconds(),
		Assignment:          assignmentView{AssignedShards: []shardID{}, PendingShards: []shardID{}},
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[groupKey{x.m.vars["streamPrefix"], x.m.vars["consumerGroup"]}]
	if g != nil {
		resp.GroupEpoch, resp.AssignmentEpoch, resp.MetadataVersion = g.groupEpoch, g.assignmentEpoch, g.metadataVersion
		resp.Assignment.MetadataVersion = g.metadataVersion
	}
	switch {
	case req.memberID != pathID:
		resp.Status = HeartbeatInvalidRequest
	case req.protocolVersion != coordinationProtocolVersion:
		resp.Status = HeartbeatUnsupportedProtocol
	case g == nil:
		// Groups are never created by heartbeats (§4.1 DOC≠CODE).
		resp.Status = HeartbeatUnknownMemberID
	default:
		c.memberHeartbeat(g, req, &resp)
		c.advanceMigration(g, c.now())
		resp.GroupEpoch, resp.AssignmentEpoch, resp.MetadataVersion = g.groupEpoch, g.assignmentEpoch, g.metadataVersion
		resp.Assignment.MetadataVersion = g.metadataVersion
	}
	x.reply(http.StatusOK, resp)
}

// memberHeartbeat applies one heartbeat of a known group to its member.
func (c *Coordinator) memberHeartbeat(g *group, req heartbeatRequest, resp *heartbeatResponse) {
	now := c.now()
	m := g.members[req.memberID]
	switch {
	case req.memberEpoch == leaveEpoch:
		if m == nil {
			resp.Status = HeartbeatUnknownMemberID
			return
		}
		if m.live() {
			c.touch(m, req, now)
			m.current = dedupe(req.owned)
			g.release(m, MemberLeaving)
		}
		resp.Status, resp.MemberEpoch = HeartbeatOK, leaveEpoch
		return
	case req.memberEpoch == 0:
		if m == nil {
			m = &member{id: req.memberID}
			g.members[m.id] = m
		}
		m.state, m.epoch = MemberStarting, 0
		m.granted, m.revoking, m.rebalanceDeadline = []int{}, []int{}, nil
		c.touch(m, req, now)
		g.bumpMetadata(true)
	case m == nil:
		resp.Status = HeartbeatUnknownMemberID
		return
	case !m.live():
		// EXPIRED, FENCED or LEAVING: the member must rejoin with epoch 0.
		resp.Status = HeartbeatFencedMemberEpoch
		return
	case req.memberEpoch > m.epoch:
		resp.Status = HeartbeatInvalidRequest
		return
	case req.memberEpoch < m.epoch:
		g.release(m, MemberFenced)
		resp.Status = HeartbeatFencedMemberEpoch
		return
	default:
		c.touch(m, req, now)
		m.state = MemberActive
	}
	m.current = dedupe(req.owned)
	assigned, pending := g.reconcile(m, append(req.owned, req.stillRevoking...), now, c.opts.RebalanceTimeout)
	if m.epoch == 0 {
		m.epoch = g.assignmentEpoch // a joining member always leaves with an epoch
	}
	resp.MemberEpoch = m.epoch
	resp.Assignment.AssignedShards, resp.Assignment.PendingShards = shardIDs(assigned), shardIDs(pending)
	switch {
	case req.metadataVersion > g.metadataVersion:
		resp.Status = HeartbeatSyncMetadata
	case len(m.revoking) > 0 || len(pending) > 0:
		resp.Status = HeartbeatRevokePending
	default:
		resp.Status = HeartbeatOK
	}
}

// touch records liveness and the runtime report of an accepted heartbeat.
func (c *Coordinator) touch(m *member, req heartbeatRequest, now time.Time) {
	m.lastHeartbeat = now
	m.leaseExpires = now.Add(c.opts.MemberLeaseTTL)
	if req.memberName != nil {
		m.name = req.memberName
	}
	m.metadataVersion = req.metadataVersion
	m.maxConcurrency, m.available = req.maxConcurrency, req.available
	m.progress = req.progress
}
