package client

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// recordedRequest is what the fake coordinator saw.
type recordedRequest struct {
	Method     string
	RequestURI string // raw, still percent-encoded
	Header     http.Header
	Body       []byte
}

// fakeCoordinator records requests and answers with handle(w, r, n), where n
// is the 1-based number of the request.
type fakeCoordinator struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recordedRequest
}

func newFake(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, n int)) *fakeCoordinator {
	t.Helper()
	f := &fakeCoordinator{}
	f.Server = httptest.NewServer(f.wrap(handle))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeCoordinator) wrap(handle func(w http.ResponseWriter, r *http.Request, n int)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, recordedRequest{Method: r.Method, RequestURI: r.RequestURI, Header: r.Header.Clone(), Body: body})
		n := len(f.reqs)
		f.mu.Unlock()
		handle(w, r, n)
	}
}

func (f *fakeCoordinator) requests() []recordedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recordedRequest(nil), f.reqs...)
}

func (f *fakeCoordinator) count() int { return len(f.requests()) }

// newTestClient builds a client with millisecond retry waits, a fixed run id,
// no CI environment and Retry-After seconds shrunk to milliseconds.
func newTestClient(t *testing.T, endpoint string, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{
		Endpoint:       endpoint,
		Username:       "admin",
		Password:       "s3cret-pw",
		RunID:          "run1",
		MaxRetries:     3,
		RetryWaitMin:   time.Millisecond,
		RetryWaitMax:   2 * time.Millisecond,
		RequestTimeout: 5 * time.Second,
		Getenv:         func(string) string { return "" },
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	c.retryAfterUnit = time.Millisecond
	return c
}

// statusName is Spring's HttpStatus enum name, as the coordinator sends it.
func statusName(status int) string {
	return strings.ToUpper(strings.ReplaceAll(http.StatusText(status), " ", "_"))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeCoordError writes the coordinator's own error shape.
func writeCoordError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]string{"status": statusName(status), "errorCode": code, "message": message})
}

// resetConnection aborts the connection with a TCP RST after the request
// was read, so the client cannot know whether it was processed.
func resetConnection(t *testing.T, w http.ResponseWriter) {
	t.Helper()
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

const migrationJSON = `{"reshardingId":"reshard-1","fromShardCount":4,"toShardCount":8,"state":"ACTIVE",` +
	`"createdAt":"2025-01-02T03:04:05.123456Z","updatedAt":"2025-01-02T03:04:06Z"}`

func writeMigration(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, migrationJSON)
}

func groupJSON(p, g string, shards int) map[string]any {
	return map[string]any{
		"streamPrefix": p, "consumerGroup": g, "state": "STABLE", "groupEpoch": 3, "assignmentEpoch": 2,
		"metadataVersion": 5, "shardCount": shards, "activeMigration": nil,
		"targetAssignmentSummary": map[string]int{"m1": shards}, "currentAssignmentSummary": map[string]int{"m1": shards},
	}
}

func mustDecode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("request body %q is not a JSON object: %v", b, err)
	}
	return m
}

func newBody(s string) io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }
