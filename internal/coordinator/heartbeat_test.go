package coordinator

import (
	"slices"
	"testing"
	"time"
)

func TestHeartbeatStatuses(t *testing.T) {
	e := newEnv(t, Options{HeartbeatInterval: 2 * time.Second, RebalanceTimeout: 30 * time.Second})
	e.createGroup("orders", "g", 4)
	m := e.member("orders", "g", "m1")

	join := m.beat()
	if join.Status != HeartbeatOK || join.MemberEpoch != 2 || join.GroupEpoch != 2 || join.AssignmentEpoch != 2 ||
		join.MetadataVersion != 2 || join.Assignment.MetadataVersion != 2 || join.ResponseTo != "m1-1" || join.MemberID != "m1" ||
		join.HeartbeatMs != 2000 || join.RebalanceMs != 30000 || !slices.Equal(indexes(join.Assignment.AssignedShards), []int{0, 1, 2, 3}) {
		t.Fatalf("join = %+v", join)
	}
	if ok := m.beat(); ok.Status != HeartbeatOK || ok.MemberEpoch != 2 {
		t.Fatalf("steady = %+v", ok)
	}
	tests := []struct {
		name   string
		mutate func(map[string]any)
		want   string
	}{
		{"higher epoch", func(b map[string]any) { b["memberEpoch"] = 9 }, HeartbeatInvalidRequest},
		{"higher metadataVersion", func(b map[string]any) { b["metadataVersion"] = 5 }, HeartbeatSyncMetadata},
		{"unsupported protocol", func(b map[string]any) { b["protocolVersion"] = 2 }, HeartbeatUnsupportedProtocol},
		{"memberId differs from path", func(b map[string]any) { b["memberId"] = "other" }, HeartbeatInvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := m.request(m.epoch)
			tc.mutate(body)
			if r := m.send(body); r.Status != tc.want {
				t.Fatalf("status = %s, want %s", r.Status, tc.want)
			}
		})
	}
	// A lower epoch fences the member; it has to rejoin with epoch 0.
	if r := m.send(m.request(1)); r.Status != HeartbeatFencedMemberEpoch {
		t.Fatalf("lower epoch = %s", r.Status)
	}
	if r := m.send(m.request(m.epoch)); r.Status != HeartbeatFencedMemberEpoch {
		t.Fatalf("fenced member heartbeat = %s", r.Status)
	}
	if r := m.send(m.request(0)); r.Status != HeartbeatOK {
		t.Fatalf("rejoin = %s", r.Status)
	}
	// Unknown member with an epoch, unknown group.
	if r := e.member("orders", "g", "ghost").send(e.member("orders", "g", "ghost").request(3)); r.Status != HeartbeatUnknownMemberID {
		t.Fatalf("unknown member = %s", r.Status)
	}
	if r := e.member("orders", "nope", "m1").beat(); r.Status != HeartbeatUnknownMemberID {
		t.Fatalf("unknown group = %s", r.Status)
	}
	// Leave with -1.
	if r := m.leave(); r.Status != HeartbeatOK || r.MemberEpoch != -1 {
		t.Fatalf("leave = %+v", r)
	}
	if g := e.group("orders", "g"); g.State != GroupEmpty {
		t.Fatalf("after leave = %s", g.State)
	}
}

func TestHeartbeatValidation(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 2)
	m := e.member("orders", "g", "m1")
	body := m.request(0)
	body["protocolVersion"] = 0
	body["requestId"] = ""
	body["runtimeConsumerCapacity"] = map[string]int{"runtimeMaxConcurrency": 0, "availableConcurrency": -1}
	got := e.do("POST", m.path(), body, noAuth()).wantAPIError(t, 400, "BAD_REQUEST", CodeInvalidRequest)
	want := "protocolVersion: must be greater than or equal to 1; requestId: must not be blank; " +
		"runtimeConsumerCapacity.availableConcurrency: must be greater than or equal to 0; " +
		"runtimeConsumerCapacity.runtimeMaxConcurrency: must be greater than or equal to 1"
	if got["message"] != want {
		t.Fatalf("message = %q", got["message"])
	}
	missing := m.request(0)
	delete(missing, "memberEpoch")
	e.do("POST", m.path(), missing, noAuth()).wantFramework(t, 400, m.path())
	// Nothing was recorded for the rejected heartbeats.
	if g := e.group("orders", "g"); g.GroupEpoch != 1 {
		t.Fatalf("rejected heartbeat changed the group: %+v", g)
	}
}

// TestTwoMembersConverge: the second member's shards stay pending until
// the first stops reporting them (revoke before assign).
func TestTwoMembersConverge(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 4)
	a, b := e.member("orders", "g", "a"), e.member("orders", "g", "b")
	e.converge("orders", "g", a)

	jb := b.beat()
	if len(jb.Assignment.AssignedShards) != 0 || !slices.Equal(indexes(jb.Assignment.PendingShards), []int{1, 3}) || jb.Status != HeartbeatRevokePending {
		t.Fatalf("b joins while a holds everything: %+v", jb)
	}
	ra := a.beat()
	if ra.Status != HeartbeatRevokePending || !slices.Equal(indexes(ra.Assignment.AssignedShards), []int{0, 2}) {
		t.Fatalf("a told to revoke: %+v", ra)
	}
	var asg assignmentsView
	e.mustStatus(e.do("GET", "/coord/v1/monitoring/streams/orders/groups/g/assignments", nil), 200).decode(t, &asg)
	if !slices.Equal(indexes(asg.RevokeProgress["a"]), []int{1, 3}) || !slices.Equal(indexes(asg.TargetAssignment["b"]), []int{1, 3}) ||
		len(asg.CurrentAssignments["b"]) != 0 || len(asg.InvariantViolations) != 0 {
		t.Fatalf("assignments mid-handoff = %+v", asg)
	}
	e.converge("orders", "g", a, b)
	if !slices.Equal(a.owned, []int{0, 2}) || !slices.Equal(b.owned, []int{1, 3}) {
		t.Fatalf("owned a=%v b=%v", a.owned, b.owned)
	}
	g := e.group("orders", "g")
	if g.TargetAssignmentSummary["a"] != 2 || g.CurrentAssignmentSummary["b"] != 2 || a.epoch != g.AssignmentEpoch || b.epoch != g.AssignmentEpoch {
		t.Fatalf("group = %+v, epochs a=%d b=%d", g, a.epoch, b.epoch)
	}
}

// TestScaleOutWithMembersCompletes: ACTIVE → DRAINING once the group is
// STABLE on the new target, DEPRECATED on the next evaluation.
func TestScaleOutWithMembersCompletes(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 2)
	a, b := e.member("orders", "g", "a"), e.member("orders", "g", "b")
	e.converge("orders", "g", a, b)
	m := e.scaleGroup("orders", "g", 6)
	e.ticks(3, tick)
	if got := e.migration("orders", "g", m.ReshardingID); got.State != MigrationActive {
		t.Fatalf("before members converge = %s", got.State)
	}
	e.converge("orders", "g", a, b)
	if got := e.migration("orders", "g", m.ReshardingID); got.State != MigrationDraining {
		t.Fatalf("after convergence = %s", got.State)
	}
	e.ticks(1, tick)
	if got := e.migration("orders", "g", m.ReshardingID); got.State != MigrationDeprecated {
		t.Fatalf("next tick = %s", got.State)
	}
	if len(a.owned)+len(b.owned) != 6 {
		t.Fatalf("owned a=%v b=%v", a.owned, b.owned)
	}
}

// TestScaleInWithMembersWaitsForRevoke: a member still holding a removed
// shard keeps the migration ACTIVE.
func TestScaleInWithMembersWaitsForRevoke(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 4)
	a := e.member("orders", "g", "a")
	e.converge("orders", "g", a)
	m := e.scaleGroup("orders", "g", 2)
	e.ticks(5, tick)
	if got := e.migration("orders", "g", m.ReshardingID); got.State != MigrationActive {
		t.Fatalf("member still owns shards 2,3: %s", got.State)
	}
	e.converge("orders", "g", a)
	e.ticks(1, tick)
	if got := e.migration("orders", "g", m.ReshardingID); got.State != MigrationDeprecated {
		t.Fatalf("after revoke = %s", got.State)
	}
}

// TestStuckRevokerIsFenced: a member that keeps reporting a revoked shard
// past the rebalance timeout is fenced and its shards move on.
func TestStuckRevokerIsFenced(t *testing.T) {
	e := newEnv(t, Options{RebalanceTimeout: 10 * time.Second})
	e.createGroup("orders", "g", 2)
	a, b := e.member("orders", "g", "a"), e.member("orders", "g", "b")
	e.converge("orders", "g", a)
	b.beat()
	stuck := slices.Clone(a.owned)
	for range 4 { // 12s > RebalanceTimeout
		a.beat()
		a.owned = stuck // never lets go of shard 1
		b.beat()
		e.ticks(1, 3*time.Second)
	}
	var members struct {
		Members []memberView `json:"members"`
	}
	e.mustStatus(e.do("GET", "/coord/v1/monitoring/streams/orders/groups/g/members", nil), 200).decode(t, &members)
	if members.Members[0].MemberID != "a" || members.Members[0].State != MemberFenced {
		t.Fatalf("members = %+v", members.Members)
	}
	if r := b.beat(); !slices.Equal(indexes(r.Assignment.AssignedShards), []int{0, 1}) {
		t.Fatalf("b after a was fenced = %+v", r)
	}
}

// TestMemberExpiryAndPruning: a lease runs out after MemberLeaseTTL (the
// tick marks EXPIRED) and the member is pruned after StaleMemberRetention.
func TestMemberExpiryAndPruning(t *testing.T) {
	e := newEnv(t, Options{MemberLeaseTTL: 5 * time.Second, StaleMemberRetention: time.Minute})
	e.createGroup("orders", "g", 2)
	a := e.member("orders", "g", "a")
	e.converge("orders", "g", a)
	e.ticks(4, time.Second)
	a.beat() // renews the lease for another 5s
	e.ticks(4, time.Second)
	if g := e.group("orders", "g"); g.State != GroupStable {
		t.Fatalf("lease still valid: %s", g.State)
	}
	e.ticks(1, time.Second)
	var members struct {
		Members []memberView `json:"members"`
	}
	e.mustStatus(e.do("GET", "/coord/v1/monitoring/streams/orders/groups/g/members", nil), 200).decode(t, &members)
	if len(members.Members) != 1 || members.Members[0].State != MemberExpired {
		t.Fatalf("members = %+v", members.Members)
	}
	if g := e.group("orders", "g"); g.State != GroupEmpty || len(g.TargetAssignmentSummary) != 0 {
		t.Fatalf("group = %+v", g)
	}
	if r := a.beat(); r.Status != HeartbeatFencedMemberEpoch {
		t.Fatalf("expired member heartbeat = %s", r.Status)
	}
	e.ticks(1, time.Minute)
	e.mustStatus(e.do("GET", "/coord/v1/monitoring/streams/orders/groups/g/members", nil), 200).decode(t, &members)
	if len(members.Members) != 0 {
		t.Fatalf("not pruned: %+v", members.Members)
	}
}

func TestMembersAndConsumptionViews(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 2)
	a := e.member("orders", "g", "a")
	e.converge("orders", "g", a)
	body := a.request(a.epoch)
	body["shardProgress"] = []map[string]any{{
		"shard": map[string]int{"shardIndex": 1}, "streamKey": "orders:1", "lastDeliveredId": "5-0",
		"lastAckedId": "4-0", "pendingCount": 1, "updatedAt": "2026-03-01T10:00:00.5Z",
	}}
	a.send(body)
	var members struct {
		Members []memberView `json:"members"`
	}
	e.mustStatus(e.do("GET", "/coord/v1/monitoring/streams/orders/groups/g/members", nil), 200).decode(t, &members)
	mv := members.Members[0]
	if *mv.MemberName != "pod-a" || mv.State != MemberActive || mv.RuntimeMaxConcurrency != 4 || mv.ActiveConsumerWorkers != 3 ||
		len(mv.CurrentAssignment) != 2 || len(mv.GrantedAssignment) != 2 || mv.RebalanceTimeoutMs != 60000 ||
		!time.Time(mv.MemberLeaseExpiresAt).Equal(e.clock.Now().Add(15*time.Second)) {
		t.Fatalf("member = %+v", mv)
	}
	var progress struct {
		Progress []consumptionView `json:"progress"`
	}
	e.mustStatus(e.do("GET", "/coord/v1/monitoring/streams/orders/groups/g/consumption", nil), 200).decode(t, &progress)
	p := progress.Progress
	if len(p) != 1 || p[0].StreamKey != "orders:1" || *p[0].LastAckedID != "4-0" || p[0].PendingCount != 1 || *p[0].UpdatedAt != "2026-03-01T10:00:00.500Z" {
		t.Fatalf("progress = %+v", p)
	}
}

func TestHealthAndCompatibility(t *testing.T) {
	e := newEnv(t, Options{CoordinatorID: "tf-acc"})
	h := e.mustStatus(e.do("GET", RouteHealth, nil), 200).json(t)
	if h["status"] != "UP" || h["coordinatorId"] != "tf-acc" || h["redis"] != "NOT_CONFIGURED" || h["loop"] != "UP" {
		t.Fatalf("health = %v", h)
	}
	c := e.mustStatus(e.do("GET", RouteCompatibility, nil), 200).json(t)
	versions := c["coordinationVersions"].([]any)
	v := versions[0].(map[string]any)
	if c["currentCoordinationVersion"] != float64(1) || v["status"] != "ACTIVE" ||
		v["introducedIn"].(map[string]any)["version"] != "0.1.0" || v["minimumSupportedUntil"].(map[string]any)["version"] != "1.0.0" ||
		v["deprecatedIn"] != nil || v["removedIn"] != nil {
		t.Fatalf("compatibility = %v", c)
	}
}
