package client

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// productionClient uses the provider's defaults (10 retries, 1–30 s
// backoff, 30 s per attempt): what a user gets, not the shrunk test waits.
func productionClient(t *testing.T, endpoint string, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{
		Endpoint: endpoint, Username: "admin", Password: "s3cret-pw", RunID: "run1",
		MaxRetries: DefaultMaxRetries, Getenv: func(string) string { return "" },
	}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// rawServer answers every connection with reply and closes it.
func rawServer(t *testing.T, reply string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			_, _ = conn.Read(buf)
			_, _ = conn.Write([]byte(reply))
			_ = conn.Close()
		}
	}()
	return ln.Addr().String()
}

// TestUnreachableFailsFast is issue 10.5: what retrying cannot fix ends
// within 10 s with the production retry settings, as a typed error naming
// the cause and the fix; nothing is ambiguous, even for a create.
func TestUnreachableFailsFast(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, map[string]string{}) }))
	plain.Config.ErrorLog = log.New(io.Discard, "", 0)
	t.Cleanup(plain.Close)
	tlsSrv, _ := newTLSCoordinator(t)

	cases := []struct {
		name     string
		endpoint string
		kind     ConnectionErrorKind
		fix      string
	}{
		{"connection refused", "http://" + closedPort(t), ConnectionRefused, "check the endpoint's host and port"},
		{"unknown host", "http://coordinator.invalid:8080", ConnectionDNS, "does not resolve"},
		{"https to plain HTTP", strings.Replace(plain.URL, "http://", "https://", 1), ConnectionHTTPSToHTTP, "use an http:// endpoint"},
		{"https to a non-HTTP, non-TLS server", "https://" + rawServer(t, "garbage\r\n\r\n"), ConnectionHTTPSToHTTP, "use an http:// endpoint"},
		{"http to a Go TLS server", strings.Replace(tlsSrv.URL, "https://", "http://", 1), ConnectionHTTPToHTTPS, "use an https:// endpoint"},
		{"http to a TLS server sending an alert", "http://" + rawServer(t, "\x15\x03\x01\x00\x02\x02\x46"), ConnectionHTTPToHTTPS, "use an https:// endpoint"},
		{"certificate from an unknown CA", tlsSrv.URL, ConnectionCertificate, "ca_cert_pem"},
	}
	for _, tc := range cases {
		for _, op := range []string{"get", "create"} {
			t.Run(tc.name+"/"+op, func(t *testing.T) {
				t.Parallel()
				// Fast failure is the attempt count below (one, or the short
				// connection budget's for a refusal), not a wall-clock bound.
				c := productionClient(t, tc.endpoint, nil)
				var err error
				if op == "get" {
					_, err = c.GetGroup(context.Background(), "orders", "billing")
				} else {
					_, err = c.CreateGroup(context.Background(), "orders", "billing", &eight, Mutation{})
				}
				var ce *ConnectionError
				if !errors.As(err, &ce) || !IsUnreachable(err) || UnreachableKind(err) != tc.kind {
					t.Fatalf("want a ConnectionError of kind %q, got %T %v", tc.kind, err, err)
				}
				if IsAmbiguous(err) {
					t.Errorf("a request that never reached the coordinator is not ambiguous: %v", err)
				}
				msg := err.Error()
				for _, want := range []string{string(tc.kind), tc.fix, "request id terraform-run1-", tc.endpoint[:strings.LastIndex(tc.endpoint, ":")]} {
					if !strings.Contains(msg, want) {
						t.Errorf("message lacks %q: %s", want, msg)
					}
				}
				if tc.kind != ConnectionRefused && ce.Attempts != 1 {
					t.Errorf("%d attempts: retrying cannot fix %s", ce.Attempts, tc.kind)
				}
			})
		}
	}
}

// TestConnectionBudgetRidesOutARestart: refused connections are retried
// (here: the first five dials are refused, as during a restart) and the call
// then succeeds; a create that never connected is sent exactly once.
func TestConnectionBudgetRidesOutARestart(t *testing.T) {
	closed := closedPort(t)
	f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
		writeJSON(w, 201, groupJSON("orders", "billing", 8))
	})
	var dials atomic.Int32
	base := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		if dials.Add(1) <= 5 {
			return d.DialContext(ctx, network, closed)
		}
		return d.DialContext(ctx, network, addr)
	}}
	c := newTestClient(t, f.URL, func(cfg *Config) { cfg.HTTPTransport = base; cfg.MaxRetries = 10 })
	if _, err := c.CreateGroup(context.Background(), "orders", "billing", &eight, Mutation{}); err != nil {
		t.Fatalf("CreateGroup: %v", err)
	}
	if dials.Load() != 6 || f.count() != 1 {
		t.Errorf("dials = %d, server requests = %d; want 6 and 1", dials.Load(), f.count())
	}
}

// TestConnectionBudgetBoundsRetries: the budget, not max_retries, ends a run
// of refused connections.
func TestConnectionBudgetBoundsRetries(t *testing.T) {
	c := newTestClient(t, "http://"+closedPort(t), func(cfg *Config) {
		cfg.MaxRetries = 1_000_000
		cfg.ConnectRetryBudget = 100 * time.Millisecond
		cfg.RetryWaitMin, cfg.RetryWaitMax = 10*time.Millisecond, 20*time.Millisecond
	})
	_, err := c.GetGroup(context.Background(), "orders", "billing")
	var ce *ConnectionError
	if !errors.As(err, &ce) || ce.Kind != ConnectionRefused {
		t.Fatalf("want connection refused, got %v", err)
	}
	// 100 ms of waits of at least 10 ms each: at most 11 attempts. No lower
	// bound beyond one: on a loaded machine the first refused dial alone
	// may outlast the budget.
	if ce.Attempts < 1 || ce.Attempts > 11 {
		t.Errorf("attempts = %d, want a few, bounded by the 100ms budget", ce.Attempts)
	}
	if !IsTransient(err) {
		t.Error("a refused connection may clear up by itself")
	}
}

// TestAuthFailuresFailFast: 401 and 403 are not retried, with production
// settings.
func TestAuthFailuresFailFast(t *testing.T) {
	for _, status := range []int{401, 403} {
		f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(status) })
		c := productionClient(t, f.URL, nil)
		_, err := c.ScaleStream(context.Background(), "orders", 8, Mutation{})
		// One request: nothing retried, so nothing waited for.
		if (status == 401 && !IsUnauthorized(err)) || (status == 403 && !IsForbidden(err)) || f.count() != 1 {
			t.Errorf("%d: %v after %d requests", status, err, f.count())
		}
	}
}

// springGeneric500 is Spring Boot's default error body: no errorCode.
func springGeneric500(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 500, map[string]any{"timestamp": "2026-01-01T00:00:00.000+00:00", "status": 500,
		"error": "Internal Server Error", "path": r.URL.Path})
}

// TestGeneric500 is issues 11.4 and 20: retried on reads, ambiguous (never
// re-sent) on every mutation.
func TestGeneric500(t *testing.T) {
	for _, tc := range networkCalls {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n <= 2 {
					springGeneric500(w, r)
					return
				}
				tc.success(w)
			})
			c := newTestClient(t, f.URL, nil)
			err := tc.run(context.Background(), c)
			reSendable := !tc.ambiguous
			if reSendable {
				if err != nil || f.count() != 3 {
					t.Fatalf("want two retries then success; got %v after %d requests", err, f.count())
				}
				return
			}
			if !IsAmbiguous(err) || f.count() != 1 {
				t.Fatalf("want an ambiguous error after one request; got %T %v after %d requests", err, err, f.count())
			}
			apiErr, ok := AsAPIError(err)
			if !ok || apiErr.HTTPStatus != 500 || apiErr.ErrorCode != "" || apiErr.RequestID == "" {
				t.Fatalf("the 500 must stay reachable: %+v", apiErr)
			}
			if !strings.Contains(err.Error(), "may or may not have been committed") || !strings.Contains(err.Error(), apiErr.RequestID) {
				t.Errorf("message: %s", err)
			}
			if IsTransient(err) {
				t.Error("an ambiguous 500 is not transient")
			}
		})
	}
}

// TestGeneric500OnGetExhausted keeps the last 500 after the retries.
func TestGeneric500OnGetExhausted(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) { springGeneric500(w, r) })
	c := newTestClient(t, f.URL, nil)
	_, err := c.GetGroup(context.Background(), "orders", "billing")
	apiErr, ok := AsAPIError(err)
	if !ok || apiErr.HTTPStatus != 500 || apiErr.Attempts != 4 || IsAmbiguous(err) || !IsTransient(err) {
		t.Fatalf("got %v (%+v)", err, apiErr)
	}
}

// TestCreateProvisioningFailureNotResent is issue 11.1: the create's 503
// REDIS_STREAM_PROVISIONING_FAILED comes back at once, with its code and
// request id; a scale's is retried.
func TestCreateProvisioningFailureNotResent(t *testing.T) {
	creates := map[string]func(context.Context, *Client) error{
		"create group": func(ctx context.Context, c *Client) error {
			_, err := c.CreateGroup(ctx, "orders", "billing", &eight, Mutation{})
			return err
		},
		"create stream": func(ctx context.Context, c *Client) error {
			_, err := c.CreateStream(ctx, "orders", &eight, Mutation{})
			return err
		},
	}
	for name, run := range creates {
		f := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ int) {
			writeCoordError(w, 503, CodeRedisStreamProvisioningFailed, "Failed to provision Redis stream orders:3")
		})
		c := newTestClient(t, f.URL, nil)
		err := run(context.Background(), c)
		apiErr, ok := AsAPIError(err)
		if !ok || ErrorCode(err) != CodeRedisStreamProvisioningFailed || f.count() != 1 || IsAmbiguous(err) || IsTransient(err) {
			t.Fatalf("%s: got %T %v after %d requests", name, err, err, f.count())
		}
		if rid := f.requests()[0].Header.Get("X-Request-Id"); apiErr.RequestID != rid || rid == "" {
			t.Errorf("%s: request id %q, sent %q", name, apiErr.RequestID, rid)
		}
	}

	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			writeCoordError(w, 503, CodeRedisStreamProvisioningFailed, "Failed to provision")
			return
		}
		writeJSON(w, 202, map[string]any{"streamPrefix": "orders", "targetShardCount": 8, "affectedConsumerGroups": []string{}, "migrations": []any{}})
	})
	c := newTestClient(t, f.URL, nil)
	if _, err := c.ScaleStream(context.Background(), "orders", 8, Mutation{}); err != nil || f.count() != 2 {
		t.Fatalf("scale: %v after %d requests", err, f.count())
	}
}

func TestConnectionFailureClassification(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	timeout := &net.OpError{Op: "dial", Net: "tcp", Err: &timeoutErr{}}
	cases := []struct {
		name  string
		err   error
		kind  ConnectionErrorKind
		retry bool
		ok    bool
	}{
		{"refused", &url.Error{Op: "Get", URL: "u", Err: refused}, ConnectionRefused, true, true},
		{"unreachable", &url.Error{Op: "Get", URL: "u", Err: &net.OpError{Op: "dial", Err: syscall.ENETUNREACH}}, ConnectionNetwork, true, true},
		{"dns not found", &url.Error{Op: "Get", URL: "u", Err: &net.DNSError{IsNotFound: true}}, ConnectionDNS, false, true},
		{"dns timeout", &url.Error{Op: "Get", URL: "u", Err: &net.DNSError{IsTimeout: true}}, ConnectionNetwork, true, true},
		{"connect timeout", &url.Error{Op: "Get", URL: "u", Err: timeout}, ConnectionTimeout, false, true},
		{"scheme mismatch", &url.Error{Op: "Get", URL: "u", Err: http.ErrSchemeMismatch}, ConnectionHTTPSToHTTP, false, true},
		{"reset after write", &url.Error{Op: "Post", URL: "u", Err: &net.OpError{Op: "read", Err: syscall.ECONNRESET}}, "", false, false},
		{"eof", &url.Error{Op: "Post", URL: "u", Err: io.EOF}, "", false, false},
	}
	for _, tc := range cases {
		kind, retry, ok := connectionFailure(tc.err)
		if kind != tc.kind || retry != tc.retry || ok != tc.ok {
			t.Errorf("%s: got (%q, %v, %v), want (%q, %v, %v)", tc.name, kind, retry, ok, tc.kind, tc.retry, tc.ok)
		}
	}
}

type timeoutErr struct{}

func (*timeoutErr) Error() string   { return "i/o timeout" }
func (*timeoutErr) Timeout() bool   { return true }
func (*timeoutErr) Temporary() bool { return true }
