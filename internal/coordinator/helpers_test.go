package coordinator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
}

// env is one coordinator behind an httptest server with a fake clock.
type env struct {
	t     *testing.T
	c     *Coordinator
	srv   *httptest.Server
	clock *fakeClock
}

func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	clock := newFakeClock()
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	c := New(opts)
	srv := httptest.NewServer(c.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = c.Close()
	})
	return &env{t: t, c: c, srv: srv, clock: clock}
}

// reply is a decoded response.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %q", err, r.body)
	}
	return m
}

func (r reply) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %T: %v: %q", v, err, r.body)
	}
}

// wantAPIError asserts a coordinator error body.
func (r reply) wantAPIError(t *testing.T, status int, statusName, code string) map[string]any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	m := r.json(t)
	if m["status"] != statusName || m["errorCode"] != code {
		t.Fatalf("error body = %s, want status %q errorCode %q", r.body, statusName, code)
	}
	if _, ok := m["message"].(string); !ok {
		t.Fatalf("error body without message: %s", r.body)
	}
	return m
}

// wantFramework asserts Spring Boot's generic error JSON.
func (r reply) wantFramework(t *testing.T, status int, path string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	m := r.json(t)
	if _, has := m["errorCode"]; has {
		t.Fatalf("framework error must not carry errorCode: %s", r.body)
	}
	if m["status"] != float64(status) || m["error"] != http.StatusText(status) || m["path"] != path {
		t.Fatalf("framework error body = %s", r.body)
	}
	if _, err := time.Parse(time.RFC3339, m["timestamp"].(string)); err != nil {
		t.Fatalf("timestamp %v: %v", m["timestamp"], err)
	}
}

type reqOption func(*http.Request)

func basic(user, pass string) reqOption {
	return func(r *http.Request) { r.SetBasicAuth(user, pass) }
}

func bearer(token string) reqOption {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
}

func header(k, v string) reqOption { return func(r *http.Request) { r.Header.Set(k, v) } }

func noAuth() reqOption { return func(r *http.Request) { r.Header.Del("Authorization") } }

// rawBody is a request body sent verbatim.
type rawBody string

// do sends a request as admin:password with a JSON body unless options say
// otherwise. body may be nil, a rawBody, or any JSON-marshalable value.
func (e *env) do(method, path string, body any, opts ...reqOption) reply {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case rawBody:
		rd = strings.NewReader(string(b))
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth("admin", "password")
	for _, o := range opts {
		o(req)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: data}
}

func (e *env) mustStatus(r reply, status int) reply {
	e.t.Helper()
	if r.status != status {
		e.t.Fatalf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	return r
}

func groupPath(p, g string) string { return "/coord/v1/streams/" + p + "/groups/" + g }

func createBody(n int) map[string]any {
	return map[string]any{"initialShardCount": n, "requestedBy": "tester", "reason": "test"}
}

func scaleBody(n int) map[string]any {
	return map[string]any{"targetShardCount": n, "requestedBy": "tester", "reason": "test"}
}

func auditBody() map[string]any { return map[string]any{"requestedBy": "tester", "reason": "test"} }

func (e *env) createGroup(p, g string, n int) {
	e.t.Helper()
	e.mustStatus(e.do("POST", groupPath(p, g), createBody(n)), http.StatusCreated)
}

func (e *env) group(p, g string) groupView {
	e.t.Helper()
	var v groupView
	e.mustStatus(e.do("GET", groupPath(p, g), nil), http.StatusOK).decode(e.t, &v)
	return v
}

func (e *env) scaleStream(p string, n int) streamScaleView {
	e.t.Helper()
	var v streamScaleView
	e.mustStatus(e.do("POST", "/coord/v1/streams/"+p+"/scale", scaleBody(n)), http.StatusAccepted).decode(e.t, &v)
	return v
}

func (e *env) scaleGroup(p, g string, n int) migrationView {
	e.t.Helper()
	var v migrationView
	e.mustStatus(e.do("POST", groupPath(p, g)+"/scale", scaleBody(n)), http.StatusAccepted).decode(e.t, &v)
	return v
}

func (e *env) migration(p, g, id string) migrationView {
	e.t.Helper()
	var v migrationView
	e.mustStatus(e.do("GET", groupPath(p, g)+"/migrations/"+id, nil), http.StatusOK).decode(e.t, &v)
	return v
}

// ticks advances the fake clock by step and runs the loop, n times.
func (e *env) ticks(n int, step time.Duration) {
	for range n {
		e.clock.Advance(step)
		e.c.Tick()
	}
}

// hbResponse decodes a heartbeat response.
type hbResponse struct {
	ResponseTo      string `json:"responseTo"`
	Status          string `json:"status"`
	MemberID        string `json:"memberId"`
	MemberEpoch     int64  `json:"memberEpoch"`
	HeartbeatMs     int64  `json:"heartbeatIntervalMs"`
	RebalanceMs     int64  `json:"rebalanceTimeoutMs"`
	GroupEpoch      int64  `json:"groupEpoch"`
	AssignmentEpoch int64  `json:"assignmentEpoch"`
	MetadataVersion int64  `json:"metadataVersion"`
	Assignment      struct {
		AssignedShards  []shardID `json:"assignedShards"`
		PendingShards   []shardID `json:"pendingShards"`
		MetadataVersion int64     `json:"metadataVersion"`
	} `json:"assignment"`
}

func indexes(ids []shardID) []int {
	out := make([]int, len(ids))
	for i, s := range ids {
		out[i] = s.ShardIndex
	}
	return out
}

// fakeMember follows the consumer loop of CONTRACT §6: join with epoch 0,
// then echo the last response's memberEpoch and metadataVersion with
// ownedShards = the last assignedShards.
type fakeMember struct {
	e       *env
	p, g    string
	id      string
	epoch   int64
	version int64
	owned   []int
	seq     int
	opts    []reqOption
}

func (e *env) member(p, g, id string, opts ...reqOption) *fakeMember {
	return &fakeMember{e: e, p: p, g: g, id: id, owned: []int{}, opts: opts}
}

func (m *fakeMember) request(epoch int64) map[string]any {
	m.seq++
	owned := make([]map[string]int, len(m.owned))
	for i, s := range m.owned {
		owned[i] = map[string]int{"shardIndex": s}
	}
	return map[string]any{
		"protocolVersion": 1, "requestId": fmt.Sprintf("%s-%d", m.id, m.seq), "memberId": m.id,
		"memberName": "pod-" + m.id, "memberEpoch": epoch, "metadataVersion": m.version,
		"runtimeConsumerCapacity": map[string]int{"runtimeMaxConcurrency": 4, "availableConcurrency": 1},
		"ownedShards":             owned, "revokingShards": []any{}, "shardProgress": []any{},
	}
}

func (m *fakeMember) path() string { return groupPath(m.p, m.g) + "/members/" + m.id + "/heartbeat" }

func (m *fakeMember) send(body map[string]any) hbResponse {
	m.e.t.Helper()
	var r hbResponse
	m.e.mustStatus(m.e.do("POST", m.path(), body, append([]reqOption{noAuth()}, m.opts...)...), http.StatusOK).decode(m.e.t, &r)
	return r
}

// beat sends one heartbeat of the loop and adopts the response.
func (m *fakeMember) beat() hbResponse {
	m.e.t.Helper()
	r := m.send(m.request(m.epoch))
	switch r.Status {
	case HeartbeatOK, HeartbeatRevokePending, HeartbeatSyncMetadata:
		m.epoch, m.version = r.MemberEpoch, r.MetadataVersion
		m.owned = indexes(r.Assignment.AssignedShards)
	case HeartbeatFencedMemberEpoch, HeartbeatUnknownMemberID:
		m.epoch, m.version, m.owned = 0, 0, []int{}
	}
	return r
}

func (m *fakeMember) leave() hbResponse {
	m.e.t.Helper()
	r := m.send(m.request(leaveEpoch))
	m.epoch, m.owned = 0, []int{}
	return r
}

// converge heartbeats every member in turn until the group is STABLE.
func (e *env) converge(p, g string, members ...*fakeMember) {
	e.t.Helper()
	for range 10 {
		for _, m := range members {
			m.beat()
		}
		if e.group(p, g).State == GroupStable {
			return
		}
	}
	e.t.Fatalf("group %s/%s did not converge: %+v", p, g, e.group(p, g))
}
