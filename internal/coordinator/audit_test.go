package coordinator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is an io.Writer safe for the handler goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func lastEvent(t *testing.T, e *env) AuditEvent {
	t.Helper()
	evs := e.c.AuditEvents()
	if len(evs) == 0 {
		t.Fatal("no audit events")
	}
	return evs[len(evs)-1]
}

func TestAuditSuccessFields(t *testing.T) {
	sink := &syncBuffer{}
	e := newEnv(t, Options{CoordinatorID: "c-1", AuditLog: sink})
	body := `{"initialShardCount":3,"requestedBy":"terraform:ws","reason":"terraform apply 1"}`
	e.mustStatus(e.do("POST", groupPath("my%20p", "g")+"?dryRun=false", rawBody(body),
		header("X-Request-Id", "tf-1"), header("X-Correlation-Id", "corr"), header("User-Agent", "tf/1.0"),
		header("X-Forwarded-For", "10.0.0.1, 10.0.0.2")), 201)
	ev := lastEvent(t, e)
	sum := sha256.Sum256([]byte(body))
	want := AuditEvent{
		Timestamp: e.clock.Now(), CoordinatorID: "c-1", Action: ActionCreateGroup, Outcome: OutcomeSuccess, Status: 201,
		Principal: "admin", Method: "POST", Path: "/coord/v1/streams/my%20p/groups/g", Route: RouteGroup, QueryString: "dryRun=false",
		StreamPrefix: "my%20p", RequestID: "tf-1", ClientAddress: "10.0.0.1", UserAgent: "tf/1.0",
		Roles: []string{"ADMIN", "MEMBER", "MONITOR", "READ", "WRITE"}, RequestSummary: map[string]string{"initialShardCount": "3"},
	}
	if ev.Timestamp != want.Timestamp || ev.CoordinatorID != want.CoordinatorID || ev.Action != want.Action || ev.Outcome != want.Outcome ||
		ev.Status != want.Status || ev.Principal != want.Principal || ev.Method != want.Method || ev.Path != want.Path ||
		ev.Route != want.Route || ev.QueryString != want.QueryString || ev.StreamPrefix != want.StreamPrefix ||
		ev.RequestID != want.RequestID || ev.ClientAddress != want.ClientAddress || ev.UserAgent != want.UserAgent ||
		!slices.Equal(ev.Roles, want.Roles) || len(ev.RequestSummary) != 1 || ev.RequestSummary["initialShardCount"] != "3" {
		t.Fatalf("event = %+v\nwant  %+v", ev, want)
	}
	if ev.ConsumerGroup == nil || *ev.ConsumerGroup != "g" || ev.ReshardingID != nil ||
		*ev.RequestedBy != "terraform:ws" || *ev.Reason != "terraform apply 1" || *ev.RequestBodySha256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("event pointers = %+v", ev)
	}
	// The log sink got one JSON line with camelCase fields.
	lines := strings.Split(strings.TrimSpace(sink.String()), "\n")
	var logged map[string]any
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &logged) != nil || logged["requestBodySha256"] != *ev.RequestBodySha256 || logged["consumerGroup"] != "g" {
		t.Fatalf("audit log = %q", sink.String())
	}
}

// TestAuditOnEveryOutcome: 400, 401, 403, 409, 429, 503 are all audited;
// requestedBy/reason/hash are missing when the body was never read.
func TestAuditOnEveryOutcome(t *testing.T) {
	users := []User{{Username: "w", Password: "p", Roles: []Role{RoleWrite}}, {Username: "r", Password: "p", Roles: []Role{RoleRead}}}
	e := newEnv(t, Options{Users: users, RateLimitEnabled: true, RateLimitPerWindow: 2})
	w := basic("w", "p")
	scale := "/coord/v1/streams/orders/scale"
	body := map[string]any{"targetShardCount": 0, "requestedBy": "me", "reason": " "}

	e.do("POST", scale, body, basic("w", "bad"))                                                                            // 401
	e.do("POST", scale, body, basic("r", "p"))                                                                              // 403
	e.do("POST", scale, body, w)                                                                                            // 400 (blank reason)
	e.do("POST", scale, scaleBody(0), w)                                                                                    // 404 STREAM_NOT_FOUND
	e.do("POST", scale, scaleBody(0), w)                                                                                    // 429
	e.do("POST", "/coord/v1/streams/other/scale", rawBody(`{"requestedBy":"me"}`), w, header("Content-Type", "text/plain")) // 415: body never read
	e.do("GET", groupPath("orders", "orders"), nil, w)                                                                      // not audited
	e.do("POST", groupPath("orders", "orders")+"/members/m/heartbeat", e.member("", "", "m").request(0), w)                 // not audited

	evs := e.c.AuditEvents()
	type row struct {
		status             int
		outcome, principal string
		bodyRead           bool
	}
	want := []row{
		{401, OutcomeUnauthorized, anonymousPrincipal, false},
		{403, OutcomeForbidden, "r", false},
		{400, OutcomeFailed, "w", true},
		{404, OutcomeFailed, "w", true},
		{429, OutcomeFailed, "w", false},
		{415, OutcomeFailed, "w", false},
	}
	if len(evs) != len(want) {
		t.Fatalf("events = %d, want %d: %+v", len(evs), len(want), evs)
	}
	for i, ev := range evs {
		wr := want[i]
		if ev.Status != wr.status || ev.Outcome != wr.outcome || ev.Principal != wr.principal || ev.Action != ActionScaleStream ||
			ev.ConsumerGroup != nil || (ev.RequestBodySha256 != nil) != wr.bodyRead || (ev.RequestedBy != nil) != wr.bodyRead {
			t.Errorf("event %d = %+v, want %+v", i, ev, wr)
		}
	}
	if evs[2].Reason != nil || *evs[2].RequestedBy != "me" {
		t.Fatalf("blank reason must be stored as null: %+v", evs[2])
	}
	if evs[0].Roles == nil || len(evs[0].Roles) != 0 || !slices.Equal(evs[1].Roles, []string{"READ"}) {
		t.Fatalf("roles = %v / %v", evs[0].Roles, evs[1].Roles)
	}
	if evs[3].RequestSummary["targetShardCount"] != "0" {
		t.Fatalf("summary = %v", evs[3].RequestSummary)
	}
}

func TestAuditActionsAndRequestIDFallbacks(t *testing.T) {
	e := newEnv(t, Options{})
	e.mustStatus(e.do("POST", "/coord/v1/streams/orders", createBody(2), header("X-Correlation-Id", "corr-1")), 201)
	m := e.scaleGroup("orders", "orders", 4)
	e.mustStatus(e.do("POST", groupPath("orders", "orders")+"/migrations/"+m.ReshardingID+"/rollback", auditBody(), header("X-Amzn-Trace-Id", "Root=1")), 202)
	e.mustStatus(e.do("DELETE", groupPath("orders", "orders"), map[string]any{"requestedBy": "t", "reason": "r", "force": true}), 200)
	e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(1))

	evs := e.c.AuditEvents()
	actions := []string{}
	for _, ev := range evs {
		actions = append(actions, ev.Action)
	}
	if !slices.Equal(actions, []string{ActionCreateStream, ActionScaleGroup, ActionRollbackMigration, ActionDeleteGroup, ActionScaleStream}) {
		t.Fatalf("actions = %v", actions)
	}
	if evs[0].RequestID != "corr-1" || evs[0].ConsumerGroup != nil || evs[2].RequestID != "Root=1" || evs[1].RequestID != "" {
		t.Fatalf("request ids = %+v", evs)
	}
	if evs[2].ReshardingID == nil || *evs[2].ReshardingID != m.ReshardingID || evs[2].Route != RouteRollback {
		t.Fatalf("rollback event = %+v", evs[2])
	}
	if evs[3].RequestSummary["force"] != "true" || evs[3].Status != 200 {
		t.Fatalf("delete event = %+v", evs[3])
	}
	if evs[4].Status != 404 || evs[4].Outcome != OutcomeFailed {
		t.Fatalf("scale of a deleted stream = %+v", evs[4])
	}
}

// TestAuditDuration measures with the coordinator's clock: here every
// reading advances it by 10ms.
func TestAuditDuration(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, Options{Now: func() time.Time {
		clock.Advance(10 * time.Millisecond)
		return clock.Now()
	}})
	e.createGroup("orders", "g", 1)
	ev := lastEvent(t, e)
	if ev.DurationMs < 10 || !ev.Timestamp.After(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("event = %+v", ev)
	}
}
