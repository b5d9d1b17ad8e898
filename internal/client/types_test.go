package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"
)

func TestTimeDecodesLeniently(t *testing.T) {
	cases := map[string]time.Time{
		`"2025-01-02T03:04:05Z"`:             time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		`"2025-01-02T03:04:05.123456789Z"`:   time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC),
		`"2025-01-02T12:04:05.5+09:00"`:      time.Date(2025, 1, 2, 3, 4, 5, 500000000, time.UTC),
		`"2025-01-02T03:04:05.25"`:           time.Date(2025, 1, 2, 3, 4, 5, 250000000, time.UTC),
		`1735787045.5`:                       time.Date(2025, 1, 2, 3, 4, 5, 500000000, time.UTC),
		`null`:                               {},
		`""`:                                 {},
		`"yesterday"`:                        {},
		`{"epochSecond":1,"nano":2}`:         {},
		`"2025-01-02 03:04:05.000000+00:00"`: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	for in, want := range cases {
		var got Time
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if !got.Equal(want) {
			t.Errorf("%s decoded to %v, want %v", in, got.Time, want)
		}
	}
	b, _ := json.Marshal(struct{ A, B Time }{B: Time{time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}})
	if string(b) != `{"A":null,"B":"2025-01-02T03:04:05Z"}` {
		t.Errorf("marshal: %s", b)
	}
}

func TestMigrationFinished(t *testing.T) {
	want := map[MigrationState]bool{
		MigrationPreparing: false, MigrationActive: false, MigrationDraining: false,
		MigrationDeprecated: true, MigrationRollingBack: false, MigrationRolledBack: true,
	}
	for state, finished := range want {
		if got := (&Migration{State: state}).Finished(); got != finished {
			t.Errorf("%s: Finished() = %v", state, got)
		}
	}
	var none *Migration
	if !none.Finished() {
		t.Error("a nil activeMigration means nothing is in progress")
	}
}

func TestMemberLive(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	future, past := Time{now.Add(5 * time.Second)}, Time{now.Add(-time.Second)}
	cases := []struct {
		m    Member
		want bool
	}{
		{Member{State: MemberActive}, true},
		{Member{State: MemberStarting, MemberLeaseExpiresAt: future}, true},
		{Member{State: MemberActive, MemberLeaseExpiresAt: past}, false},
		{Member{State: MemberLeaving, MemberLeaseExpiresAt: future}, false},
		{Member{State: MemberExpired}, false},
		{Member{State: MemberFenced}, false},
	}
	for _, tc := range cases {
		if got := tc.m.Live(now); got != tc.want {
			t.Errorf("%s lease %v: Live = %v", tc.m.State, tc.m.MemberLeaseExpiresAt.Time, got)
		}
	}
}

func TestMonitoringDecoding(t *testing.T) {
	bodies := map[string]string{
		"/coord/v1/monitoring/groups": `{"groups":[{"streamPrefix":"orders","consumerGroup":"orders","state":"RECONCILING","groupEpoch":4,` +
			`"assignmentEpoch":3,"metadataVersion":6,"shardCount":8,"activeMigration":` + migrationJSON + `,` +
			`"targetAssignmentSummary":{"m1":8},"currentAssignmentSummary":{"m1":4}}]}`,
		"/coord/v1/monitoring/streams/orders/groups/billing/members": `{"members":[{"memberId":"m1","memberName":"pod-1","state":"ACTIVE",` +
			`"memberEpoch":7,"metadataVersion":6,"runtimeMaxConcurrency":4,"activeConsumerWorkers":2,"currentAssignment":[{"shardIndex":0}],` +
			`"grantedAssignment":[{"shardIndex":0},{"shardIndex":1}],"revoking":[],"lastHeartbeatAt":"2025-01-02T03:04:05.1Z",` +
			`"memberLeaseExpiresAt":"2025-01-02T03:04:20.1Z","rebalanceTimeoutMs":60000,"rebalanceDeadlineAt":null,"shardProgress":[{"x":1}]}]}`,
		"/coord/v1/monitoring/streams/orders/groups/billing/assignments": `{"targetAssignment":{"m1":[{"shardIndex":0}]},` +
			`"currentAssignments":{"m1":[]},"revokeProgress":{},"invariantViolations":["none really"]}`,
		"/coord/v1/monitoring/streams/orders/groups/billing/consumption": `{"progress":[{"streamPrefix":"orders","consumerGroup":"billing",` +
			`"memberId":"m1","memberName":"pod-1","memberState":"ACTIVE","shard":{"shardIndex":3},"streamKey":"orders:3",` +
			`"lastDeliveredId":"1-0","lastAckedId":null,"pendingCount":2,"updatedAt":"2025-01-02T03:04:05Z"}]}`,
		"/coord/v1/monitoring/streams/orders/groups/billing/migrations": `{"migrations":[` + migrationJSON + `],"activeReshardingId":null}`,
		"/coord/v1/monitoring/streams/orders/groups/billing":            `{"streamPrefix":"orders","consumerGroup":"billing","shardCount":2,"metadataVersion":6}`,
		"/coord/v1/streams/orders/groups/billing/producer-routing": `{"streamPrefix":"orders","consumerGroup":"billing","metadataVersion":6,` +
			`"shardCount":2,"streamKeyPattern":"orders:{shardIndex}","shards":[{"shardIndex":0,"streamKey":"orders:0","redisSlot":8578},` +
			`{"shardIndex":1,"streamKey":"orders:1","redisSlot":12707}]}`,
		"/coord/v1/monitoring/compatibility": `{"currentCoordinationVersion":1,"supportedCoordinationVersions":{"min":1,"max":1},` +
			`"coordinationVersions":[{"version":1,"status":"ACTIVE","introducedIn":{"major":0,"minor":1,"patch":0,"qualifier":null,"version":"0.1.0"},` +
			`"deprecatedIn":null,"minimumSupportedUntil":{"version":"1.0.0"},"removedIn":null,"timingDefaults":{"heartbeatInterval":"PT3S"}}]}`,
		"/coord/v1/monitoring/session": `{"authenticated":true,"username":"admin","roles":["ADMIN","WRITE"]}`,
	}
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, bodies[r.URL.EscapedPath()])
	})
	c := newTestClient(t, f.URL, nil)
	ctx := context.Background()

	groups, err := c.Groups(ctx)
	if err != nil || len(groups) != 1 || groups[0].ActiveMigration.ToShardCount != 8 || groups[0].State != GroupReconciling ||
		groups[0].CurrentAssignmentSummary["m1"] != 4 || groups[0].ActiveMigration.CreatedAt.Nanosecond() != 123456000 {
		t.Errorf("Groups: %+v %v", groups, err)
	}
	members, err := c.Members(ctx, "orders", "billing")
	if err != nil || len(members) != 1 || !members[0].Live(time.Date(2025, 1, 2, 3, 4, 10, 0, time.UTC)) ||
		len(members[0].GrantedAssignment) != 2 || !members[0].RebalanceDeadlineAt.IsZero() || string(members[0].ShardProgress) != `[{"x":1}]` {
		t.Errorf("Members: %+v %v", members, err)
	}
	as, err := c.Assignments(ctx, "orders", "billing")
	if err != nil || !reflect.DeepEqual(as.TargetAssignment["m1"], []ShardID{{0}}) || len(as.InvariantViolations) != 1 {
		t.Errorf("Assignments: %+v %v", as, err)
	}
	progress, err := c.Consumption(ctx, "orders", "billing")
	if err != nil || len(progress) != 1 || progress[0].Shard.ShardIndex != 3 || progress[0].LastAckedID != "" || progress[0].PendingCount != 2 {
		t.Errorf("Consumption: %+v %v", progress, err)
	}
	history, err := c.Migrations(ctx, "orders", "billing")
	if err != nil || len(history.Migrations) != 1 || history.ActiveReshardingID != "" {
		t.Errorf("Migrations: %+v %v", history, err)
	}
	summary, err := c.GroupSummary(ctx, "orders", "billing")
	if err != nil || summary.ShardCount != 2 {
		t.Errorf("GroupSummary: %+v %v", summary, err)
	}
	routing, err := c.ProducerRouting(ctx, "orders", "billing")
	if err != nil || routing.StreamKeyPattern != "orders:{shardIndex}" || len(routing.Shards) != 2 || routing.Shards[1].RedisSlot != 12707 {
		t.Errorf("ProducerRouting: %+v %v", routing, err)
	}
	compat, err := c.Compatibility(ctx)
	if err != nil || compat.SupportedCoordinationVersions.Max != 1 || len(compat.CoordinationVersions) != 1 ||
		string(compat.CoordinationVersions[0].TimingDefaults) != `{"heartbeatInterval":"PT3S"}` {
		t.Errorf("Compatibility: %+v %v", compat, err)
	}
	session, err := c.Session(ctx)
	if err != nil || !session.Authenticated || session.Username != "admin" || len(session.Roles) != 2 {
		t.Errorf("Session: %+v %v", session, err)
	}
	for _, r := range f.requests() {
		if r.Method != http.MethodGet || len(r.Body) != 0 {
			t.Errorf("%s %s sent a body %q", r.Method, r.RequestURI, r.Body)
		}
	}
}

func TestHeartbeatRequest(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeJSON(w, 200, map[string]any{"responseTo": "x", "status": "OK", "memberId": "m 1", "memberEpoch": 1,
			"heartbeatIntervalMs": 3000, "rebalanceTimeoutMs": 60000, "groupEpoch": 2, "assignmentEpoch": 2, "metadataVersion": 1,
			"assignment": map[string]any{"assignedShards": []map[string]int{{"shardIndex": 0}}, "pendingShards": []any{}, "metadataVersion": 1}})
	})
	c := newTestClient(t, f.URL, nil)
	resp, err := c.Heartbeat(context.Background(), "orders", "billing", HeartbeatRequest{
		MemberID: "m 1", RuntimeConsumerCapacity: RuntimeConsumerCapacity{RuntimeMaxConcurrency: 2, AvailableConcurrency: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != HeartbeatOK || resp.HeartbeatIntervalMs != 3000 || len(resp.Assignment.AssignedShards) != 1 {
		t.Errorf("response %+v", resp)
	}
	r := f.requests()[0]
	if r.RequestURI != "/coord/v1/streams/orders/groups/billing/members/m%201/heartbeat" {
		t.Errorf("URI %s", r.RequestURI)
	}
	body := mustDecode(t, r.Body)
	want := map[string]any{
		"protocolVersion": float64(1), "memberId": "m 1", "memberName": nil, "memberEpoch": float64(0), "metadataVersion": float64(0),
		"runtimeConsumerCapacity": map[string]any{"runtimeMaxConcurrency": float64(2), "availableConcurrency": float64(2)},
		"ownedShards":             []any{}, "revokingShards": []any{}, "shardProgress": []any{},
		"requestId": body["requestId"],
	}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("body %v\nwant %v", body, want)
	}
	if id, _ := body["requestId"].(string); id == "" || id != r.Header.Get("X-Request-Id") {
		t.Errorf("requestId %q vs header %q", id, r.Header.Get("X-Request-Id"))
	}
	if _, err := c.Heartbeat(context.Background(), "orders", "billing", HeartbeatRequest{}); err == nil {
		t.Error("a blank memberId was sent")
	}
}
