package coordinator

import (
	"fmt"
	"net/http"
	"testing"
)

// TestCreateStream: only group {p, p} is created; a second create of the
// prefix, or of a prefix some group already uses, is 409.
func TestCreateStream(t *testing.T) {
	e := newEnv(t, Options{})
	m := e.mustStatus(e.do("POST", "/coord/v1/streams/orders", map[string]any{"requestedBy": "t"}), 201).json(t)
	if m["streamPrefix"] != "orders" || m["shardCount"] != float64(12) || m["metadataVersion"] != float64(1) || len(m) != 3 {
		t.Fatalf("create stream = %v", m)
	}
	if g := e.group("orders", "orders"); g.ShardCount != 12 {
		t.Fatalf("group {orders,orders} = %+v", g)
	}
	e.do("POST", "/coord/v1/streams/orders", createBody(3)).wantAPIError(t, 409, "CONFLICT", CodeStreamPrefixAlreadyExists)

	e.createGroup("payments", "billing", 2)
	e.do("POST", "/coord/v1/streams/payments", createBody(3)).wantAPIError(t, 409, "CONFLICT", CodeStreamPrefixAlreadyExists)

	// Groups are never created by heartbeats.
	r := e.member("orders", "billing", "m1").send(e.member("orders", "billing", "m1").request(0))
	if r.Status != HeartbeatUnknownMemberID {
		t.Fatalf("heartbeat to an uncreated group = %s", r.Status)
	}
	e.do("GET", groupPath("orders", "billing"), nil).wantAPIError(t, 404, "NOT_FOUND", CodeGroupNotFound)
}

func TestCreateStreamDefaultShardCountOption(t *testing.T) {
	e := newEnv(t, Options{DefaultInitialShardCount: 4})
	m := e.mustStatus(e.do("POST", "/coord/v1/streams/orders", map[string]any{"requestedBy": "t", "initialShardCount": nil}), 201).json(t)
	if m["shardCount"] != float64(4) {
		t.Fatalf("shardCount = %v", m["shardCount"])
	}
}

// TestCreateGroup: a new group starts EMPTY at epoch/version 1 and does not
// inherit a sibling's shard count.
func TestCreateGroup(t *testing.T) {
	e := newEnv(t, Options{})
	e.mustStatus(e.do("POST", "/coord/v1/streams/orders", createBody(5)), 201)
	var v groupView
	e.mustStatus(e.do("POST", groupPath("orders", "audit"), map[string]any{"requestedBy": "t"}), 201).decode(t, &v)
	want := groupView{StreamPrefix: "orders", ConsumerGroup: "audit", State: GroupEmpty, GroupEpoch: 1, AssignmentEpoch: 1, MetadataVersion: 1, ShardCount: 12}
	if v.StreamPrefix != want.StreamPrefix || v.ConsumerGroup != want.ConsumerGroup || v.State != want.State ||
		v.GroupEpoch != 1 || v.AssignmentEpoch != 1 || v.MetadataVersion != 1 || v.ShardCount != 12 || v.ActiveMigration != nil ||
		len(v.TargetAssignmentSummary) != 0 || len(v.CurrentAssignmentSummary) != 0 {
		t.Fatalf("created group = %+v, want %+v", v, want)
	}
	raw := e.do("GET", groupPath("orders", "audit"), nil).json(t)
	if _, present := raw["activeMigration"]; !present || raw["activeMigration"] != nil {
		t.Fatalf("activeMigration must be an explicit null: %v", raw)
	}
	e.do("POST", groupPath("orders", "audit"), createBody(1)).wantAPIError(t, 409, "CONFLICT", CodeGroupAlreadyExists)
}

func TestMonitoringGroupEqualsAdminGet(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 3)
	e.scaleGroup("orders", "g", 4)
	admin := e.do("GET", groupPath("orders", "g"), nil)
	monitoring := e.do("GET", "/coord/v1/monitoring/streams/orders/groups/g", nil)
	if string(admin.body) != string(monitoring.body) {
		t.Fatalf("admin %s\nmonitoring %s", admin.body, monitoring.body)
	}
	var list struct {
		Groups []groupView `json:"groups"`
	}
	e.createGroup("a", "z", 1)
	e.mustStatus(e.do("GET", RouteMonitoringGroups, nil), 200).decode(t, &list)
	if len(list.Groups) != 2 || list.Groups[0].StreamPrefix != "a" || list.Groups[1].ShardCount != 4 {
		t.Fatalf("groups = %+v", list.Groups)
	}
}

// TestProducerRouting checks keys, slots and the literal pattern.
func TestProducerRouting(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 6)
	var v routingView
	e.mustStatus(e.do("GET", groupPath("orders", "g")+"/producer-routing", nil), 200).decode(t, &v)
	if v.StreamKeyPattern != "orders:{shardIndex}" || v.ShardCount != 6 || v.MetadataVersion != 1 || len(v.Shards) != 6 {
		t.Fatalf("routing = %+v", v)
	}
	for i, want := range map[int]int{0: 8578, 1: 12707, 5: 12583} {
		if s := v.Shards[i]; s.ShardIndex != i || s.StreamKey != fmt.Sprintf("orders:%d", i) || s.RedisSlot != want {
			t.Errorf("shard %d = %+v, want slot %d", i, s, want)
		}
	}
	e.createGroup("create-order", "g", 5)
	e.mustStatus(e.do("GET", groupPath("create-order", "g")+"/producer-routing", nil), 200).decode(t, &v)
	if s := v.Shards[4]; s.StreamKey != "create-order:4" || s.RedisSlot != 9068 {
		t.Fatalf("create-order:4 = %+v", s)
	}
}

// TestDeleteGroup: ACTIVE/STARTING members block unless force; LEAVING and
// EXPIRED do not; an active migration does not; the body is the snapshot
// taken before the delete.
func TestDeleteGroup(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 2)
	a, b := e.member("orders", "g", "a"), e.member("orders", "g", "b")
	a.beat() // STARTING
	e.do("DELETE", groupPath("orders", "g"), map[string]any{"requestedBy": "t", "reason": "r", "force": false}).
		wantAPIError(t, 409, "CONFLICT", CodeGroupHasActiveMembers)
	a.beat() // ACTIVE
	e.do("DELETE", groupPath("orders", "g"), auditBody()).wantAPIError(t, 409, "CONFLICT", CodeGroupHasActiveMembers)

	a.leave()
	b.beat()
	e.clock.Advance(defaultMemberLeaseTTL)
	e.c.Tick() // b EXPIRED
	e.scaleGroup("orders", "g", 5)
	before := e.group("orders", "g")
	var snapshot groupView
	e.mustStatus(e.do("DELETE", groupPath("orders", "g"), auditBody()), 200).decode(t, &snapshot)
	if snapshot.ShardCount != 5 || snapshot.ActiveMigration == nil || snapshot.GroupEpoch != before.GroupEpoch {
		t.Fatalf("snapshot = %+v, before = %+v", snapshot, before)
	}
	e.do("GET", groupPath("orders", "g"), nil).wantAPIError(t, 404, "NOT_FOUND", CodeGroupNotFound)
	e.do("DELETE", groupPath("orders", "g"), auditBody()).wantAPIError(t, 404, "NOT_FOUND", CodeGroupNotFound)

	// Force deletes past live members; a re-created group starts fresh.
	e.createGroup("orders", "g", 2)
	e.member("orders", "g", "c").beat()
	e.mustStatus(e.do("DELETE", groupPath("orders", "g"), map[string]any{"requestedBy": "t", "reason": "r", "force": true}), http.StatusOK)
	e.createGroup("orders", "g", 2)
	if g := e.group("orders", "g"); g.GroupEpoch != 1 || g.State != GroupEmpty {
		t.Fatalf("re-created group = %+v", g)
	}
}
