package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"
)

func TestDecodeError(t *testing.T) {
	longHTML := "<html><body>" + strings.Repeat("<p>upstream exploded</p>\n", 50) + "</body></html>"
	cases := []struct {
		name                 string
		status               int
		role, authMode, body string
		wantStatus, wantCode string
		wantMessage          []string // substrings
	}{
		{
			name: "coordinator JSON", status: 409, role: "WRITE",
			body:       `{"status":"CONFLICT","errorCode":"ACTIVE_MIGRATION_EXISTS","message":"Active migration reshard-1 exists"}`,
			wantStatus: "CONFLICT", wantCode: CodeActiveMigrationExists, wantMessage: []string{"Active migration reshard-1 exists"},
		},
		{
			name: "spring generic 400", status: 400, role: "WRITE",
			body:       `{"timestamp":"2025-01-01T00:00:00.000+00:00","status":400,"error":"Bad Request","path":"/coord/v1/streams/x"}`,
			wantStatus: "Bad Request", wantCode: "",
		},
		{
			name: "spring generic with message", status: 415, role: "WRITE",
			body:       `{"timestamp":"2025-01-01T00:00:00Z","status":415,"error":"Unsupported Media Type","message":"Content-Type 'text/plain' is not supported","path":"/x"}`,
			wantStatus: "Unsupported Media Type", wantMessage: []string{"text/plain"},
		},
		{
			name: "empty 401 basic", status: 401, role: "READ", authMode: authModeBasic,
			wantStatus: "Unauthorized", wantMessage: []string{"rejected the username/password"},
		},
		{
			name: "empty 401 token", status: 401, role: "READ", authMode: authModeToken,
			wantStatus: "Unauthorized", wantMessage: []string{"rejected the bearer token"},
		},
		{
			name: "login 401 spring body", status: 401, role: "WRITE", authMode: authModeLoginCall,
			body:        `{"timestamp":"2025-01-01T00:00:00Z","status":401,"error":"Unauthorized","path":"/coord/v1/auth/login"}`,
			wantStatus:  "Unauthorized",
			wantMessage: []string{"login failed: the coordinator rejected the username or password"},
		},
		{
			name: "empty 403 write", status: 403, role: "WRITE",
			wantStatus: "Forbidden", wantMessage: []string{"the principal lacks the WRITE role required for this call"},
		},
		{
			name: "empty 403 read", status: 403, role: "READ",
			wantStatus: "Forbidden", wantMessage: []string{"the principal lacks the READ role required for this call"},
		},
		{
			name: "html from a proxy", status: 502, role: "READ", body: longHTML,
			wantStatus: "Bad Gateway", wantMessage: []string{"unexpected non-JSON response: <html><body><p>upstream exploded</p>", "…"},
		},
		{
			name: "truncated JSON", status: 409, role: "WRITE", body: `{"status":"CONFLICT","errorCode":"STATE_VERS`,
			wantStatus: "Conflict", wantMessage: []string{`unexpected non-JSON response: {"status":"CONFLICT","errorCode":"STATE_VERS`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := decodeError(responseInfo{
				method: "POST", path: "/coord/v1/streams/orders", requestID: "rid", status: tc.status,
				header: http.Header{}, body: []byte(tc.body), attempts: 1, role: tc.role, authMode: tc.authMode,
			})
			if e.HTTPStatus != tc.status || e.Status != tc.wantStatus || e.ErrorCode != tc.wantCode {
				t.Errorf("got status %d %q code %q", e.HTTPStatus, e.Status, e.ErrorCode)
			}
			for _, want := range tc.wantMessage {
				if !strings.Contains(e.Message, want) {
					t.Errorf("message %q lacks %q", e.Message, want)
				}
			}
			if len(e.Message) > 400 {
				t.Errorf("message not bounded: %d bytes", len(e.Message))
			}
		})
	}
}

func TestDecodeErrorReadsRetryAfter(t *testing.T) {
	e := decodeError(responseInfo{status: 429, header: http.Header{"Retry-After": {"17"}},
		body: []byte(`{"status":"TOO_MANY_REQUESTS","errorCode":"RATE_LIMIT_EXCEEDED","message":"Coordinator API rate limit exceeded"}`)})
	if e.RetryAfter.Seconds() != 17 || e.ErrorCode != CodeRateLimitExceeded {
		t.Errorf("got %+v", e)
	}
}

func TestAPIErrorFormat(t *testing.T) {
	e := &APIError{HTTPStatus: 409, Status: "CONFLICT", ErrorCode: CodeActiveMigrationExists, Message: "busy",
		RequestID: "terraform-run1-scale-stream-0a1b2c3d", Method: "POST", Path: "/coord/v1/streams/orders/scale", Attempts: 1}
	want := "POST /coord/v1/streams/orders/scale: 409 CONFLICT ACTIVE_MIGRATION_EXISTS: busy (request id terraform-run1-scale-stream-0a1b2c3d)"
	if got := e.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	e.Attempts = 4
	if got := e.Error(); !strings.HasSuffix(got, "(request id terraform-run1-scale-stream-0a1b2c3d, 4 attempts)") {
		t.Errorf("Error() = %s", got)
	}
}

func TestErrorPredicates(t *testing.T) {
	wrap := func(e *APIError) error { return fmt.Errorf("reading group: %w", e) }
	notFound := wrap(&APIError{HTTPStatus: 404, ErrorCode: CodeGroupNotFound})
	unknownRoute := wrap(&APIError{HTTPStatus: 404, Status: "Not Found"})
	conflict := wrap(&APIError{HTTPStatus: 409, ErrorCode: CodeActiveMigrationExists})
	plain := errors.New("boom")

	checks := []struct {
		name string
		got  bool
		want bool
	}{
		{"IsNotFound coordinator 404", IsNotFound(notFound), true},
		{"IsNotFound unknown route", IsNotFound(unknownRoute), false},
		{"IsNotFound plain", IsNotFound(plain), false},
		{"IsConflict any", IsConflict(conflict), true},
		{"IsConflict matching code", IsConflict(conflict, CodeGroupAlreadyExists, CodeActiveMigrationExists), true},
		{"IsConflict other code", IsConflict(conflict, CodeGroupAlreadyExists), false},
		{"IsConflict on 404", IsConflict(notFound), false},
		{"IsForbidden", IsForbidden(wrap(&APIError{HTTPStatus: 403})), true},
		{"IsUnauthorized", IsUnauthorized(wrap(&APIError{HTTPStatus: 401})), true},
		{"IsUnauthorized on 403", IsUnauthorized(wrap(&APIError{HTTPStatus: 403})), false},
		{"IsRateLimited", IsRateLimited(wrap(&APIError{HTTPStatus: 429})), true},
		{"IsAmbiguous", IsAmbiguous(fmt.Errorf("x: %w", &AmbiguousError{Err: io.EOF})), true},
		{"IsAmbiguous plain", IsAmbiguous(plain), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if ErrorCode(conflict) != CodeActiveMigrationExists || ErrorCode(plain) != "" {
		t.Error("ErrorCode does not see through wrapping")
	}
}

func TestIsTransient(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"state version conflict", &APIError{HTTPStatus: 409, ErrorCode: CodeStateVersionConflict}, true},
		{"rate limited", &APIError{HTTPStatus: 429}, true},
		{"active migration", &APIError{HTTPStatus: 409, ErrorCode: CodeActiveMigrationExists}, false},
		{"not found", &APIError{HTTPStatus: 404, ErrorCode: CodeGroupNotFound}, false},
		{"connection reset", &transportError{err: syscall.ECONNRESET}, true},
		{"eof", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"ambiguous", &AmbiguousError{Err: syscall.ECONNRESET}, false},
		{"deadline", &DeadlineError{Last: &APIError{HTTPStatus: 429}}, false},
		{"cancelled", fmt.Errorf("x: %w", context.Canceled), false},
		{"plain", errors.New("boom"), false},
	}
	for _, tc := range cases {
		if got := IsTransient(tc.err); got != tc.want {
			t.Errorf("IsTransient(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestForbiddenNamesTheRole(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) { w.WriteHeader(http.StatusForbidden) })
	c := newTestClient(t, f.URL, nil)
	ctx := context.Background()

	_, err := c.DeleteGroup(ctx, "orders", "billing", false, Mutation{})
	if !IsForbidden(err) || !strings.Contains(err.Error(), "lacks the WRITE role") {
		t.Errorf("delete: %v", err)
	}
	_, err = c.Members(ctx, "orders", "billing")
	if !IsForbidden(err) || !strings.Contains(err.Error(), "lacks the READ role") {
		t.Errorf("members: %v", err)
	}
	_, err = c.Heartbeat(ctx, "orders", "billing", HeartbeatRequest{MemberID: "m1"})
	if !IsForbidden(err) || !strings.Contains(err.Error(), "lacks the MEMBER role") {
		t.Errorf("heartbeat: %v", err)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		http.Redirect(w, r, "https://login.example/sso", http.StatusFound)
	})
	c := newTestClient(t, f.URL, nil)
	_, err := c.CreateGroup(context.Background(), "orders", "billing", nil, Mutation{})
	apiErr, ok := AsAPIError(err)
	if !ok || apiErr.HTTPStatus != http.StatusFound || !strings.Contains(apiErr.Message, `unexpected redirect to "https://login.example/sso"`) {
		t.Fatalf("got %v", err)
	}
	if got := f.count(); got != 1 {
		t.Errorf("requests = %d, want 1", got)
	}
}

func FuzzDecodeError(f *testing.F) {
	seeds := []string{
		"",
		`{"status":"CONFLICT","errorCode":"GROUP_ALREADY_EXISTS","message":"exists"}`,
		`{"timestamp":"2025-01-01T00:00:00Z","status":401,"error":"Unauthorized","path":"/coord/v1/auth/login"}`,
		`{"status":`,
		"<html><title>502</title></html>",
		`{"status":null,"errorCode":7}`,
		"\xff\xfe garbage",
	}
	for _, s := range seeds {
		f.Add(409, s)
	}
	f.Fuzz(func(t *testing.T, status int, body string) {
		e := decodeError(responseInfo{method: "GET", path: "/p", status: status, header: http.Header{}, body: []byte(body), role: "READ"})
		if e.HTTPStatus != status || e.Method != "GET" || e.Path != "/p" {
			t.Fatalf("lost call context: %+v", e)
		}
		if status >= 100 && status <= 599 && http.StatusText(status) != "" && e.Status == "" {
			t.Fatalf("no status text for %d", status)
		}
		if strings.HasPrefix(e.Message, "unexpected non-JSON response: ") && len(e.Message) > len("unexpected non-JSON response: ")+maxExcerpt+len("…") {
			t.Fatalf("excerpt not bounded: %d bytes", len(e.Message))
		}
		if strings.HasPrefix(e.Message, "unexpected non-JSON response: ") && !utf8.ValidString(e.Message) {
			t.Fatalf("excerpt is not valid UTF-8: %q", e.Message)
		}
		if !strings.HasPrefix(e.Error(), "GET /p: ") {
			t.Fatalf("Error() = %q", e.Error())
		}
	})
}
