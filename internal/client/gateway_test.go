package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const gatewayPage = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"

func TestGatewayErrorsWithoutCodeAreRetriedOnGET(t *testing.T) {
	for _, status := range []int{http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout} {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n <= 2 {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(status)
				_, _ = io.WriteString(w, gatewayPage)
				return
			}
			writeJSON(w, http.StatusOK, groupJSON("orders", "billing", 4))
		})
		c := newTestClient(t, f.URL, nil)
		g, err := c.GetGroup(context.Background(), "orders", "billing")
		if err != nil {
			t.Fatalf("%d: GetGroup: %v", status, err)
		}
		if g.ShardCount != 4 || f.count() != 3 {
			t.Errorf("%d: shardCount %d after %d requests, want 4 after 3", status, g.ShardCount, f.count())
		}
	}
}

// TestLostAnswersOnMutationsAreAmbiguous is issue 20's one rule: on every
// mutation, an answer that is not the coordinator's own decision leaves the
// outcome unknown. It is sent once and reported as an AmbiguousError (with its
// kind), never re-sent by the transport; a coordinator 503 with its own
// errorCode stays what it was (retried).
func TestLostAnswersOnMutationsAreAmbiguous(t *testing.T) {
	type answer struct {
		name   string
		kind   AmbiguousKind
		status int
		serve  func(t *testing.T, w http.ResponseWriter, r *http.Request, success func(http.ResponseWriter))
	}
	html := func(status int) func(*testing.T, http.ResponseWriter, *http.Request, func(http.ResponseWriter)) {
		return func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ func(http.ResponseWriter)) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, gatewayPage)
		}
	}
	answers := []answer{
		{"502 HTML", AmbiguousNotCoordinatorAnswer, 502, html(502)},
		{"503 empty", AmbiguousNotCoordinatorAnswer, 503, func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ func(http.ResponseWriter)) {
			w.WriteHeader(503)
		}},
		{"504 HTML", AmbiguousNotCoordinatorAnswer, 504, html(504)},
		{"Spring 500", AmbiguousNotCoordinatorAnswer, 500, func(_ *testing.T, w http.ResponseWriter, r *http.Request, _ func(http.ResponseWriter)) {
			springGeneric500(w, r)
		}},
		{"reset", AmbiguousNoAnswer, 0, func(t *testing.T, w http.ResponseWriter, _ *http.Request, _ func(http.ResponseWriter)) {
			resetConnection(t, w)
		}},
		{"garbled 2xx", AmbiguousUnreadableAnswer, 0, func(_ *testing.T, w http.ResponseWriter, _ *http.Request, success func(http.ResponseWriter)) {
			rec := httptest.NewRecorder()
			success(rec)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes()[:rec.Body.Len()/2])
		}},
		{"delay past request_timeout", AmbiguousNoAnswer, 0, func(_ *testing.T, w http.ResponseWriter, r *http.Request, _ func(http.ResponseWriter)) {
			<-r.Context().Done() // the client gives up first
		}},
	}
	for _, tc := range networkCalls {
		if !tc.ambiguous {
			continue
		}
		for _, a := range answers {
			t.Run(tc.name+"/"+a.name, func(t *testing.T) {
				f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
					if n == 1 {
						a.serve(t, w, r, tc.success)
						return
					}
					tc.success(w)
				})
				// Only the delay needs a short request timeout; the others
				// answer at once, so a loaded machine cannot time them out.
				delay := a.name == "delay past request_timeout"
				c := newTestClient(t, f.URL, func(cfg *Config) {
					if delay {
						cfg.RequestTimeout = 200 * time.Millisecond
					}
				})
				err := tc.run(context.Background(), c)
				var amb *AmbiguousError
				if !errors.As(err, &amb) || f.count() > 1 || (!delay && f.count() != 1) {
					t.Fatalf("want one request ending in an AmbiguousError, got %d requests and %T %v", f.count(), err, err)
				}
				if f.count() == 0 {
					// The timeout fired before the server's handler saw the
					// request (a loaded machine): nothing was re-sent, which is
					// the point; the request id is checked on the other runs.
					return
				}
				want := a.status
				if a.kind == AmbiguousUnreadableAnswer {
					want = amb.Status // the call's own 2xx
					if want < 200 || want > 299 {
						t.Errorf("status %d, want the 2xx", want)
					}
				}
				if amb.Kind != a.kind || amb.Status != want || amb.RequestID != f.requests()[0].Header.Get("X-Request-Id") {
					t.Errorf("got kind %d status %d request id %q", amb.Kind, amb.Status, amb.RequestID)
				}
				if IsTransient(err) || !strings.Contains(err.Error(), amb.RequestID) {
					t.Errorf("must not be transient and must name the request id: %v", err)
				}
			})
		}
	}
}

func TestCoordinator503WithCodeOnMutationIsRetried(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			writeCoordError(w, 503, CodeCoordinatorTerminating, "shutting down")
			return
		}
		writeMigration(w, 202)
	})
	c := newTestClient(t, f.URL, nil)
	if _, err := c.ScaleGroup(context.Background(), "orders", "billing", 8, Mutation{}); err != nil || f.count() != 2 {
		t.Fatalf("want a retry then success, got %v after %d requests", err, f.count())
	}
}

func TestCancelledBeforeSendingIsNotAmbiguous(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) { writeMigration(w, 202) })
	c := newTestClient(t, f.URL, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.ScaleGroup(ctx, "orders", "billing", 8, Mutation{})
	if err == nil || IsAmbiguous(err) || !errors.Is(err, context.Canceled) || f.count() != 0 {
		t.Fatalf("a call cancelled before it started sends nothing and is not ambiguous: %v after %d requests", err, f.count())
	}
}

func TestGatewayErrorsExhaustRetriesWithAttemptCount(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	c := newTestClient(t, f.URL, nil)
	_, err := c.GetGroup(context.Background(), "orders", "billing")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatus != http.StatusServiceUnavailable || apiErr.Attempts != 4 {
		t.Fatalf("want a 503 after 4 attempts (MaxRetries 3), got %v", err)
	}
	if !IsTransient(err) {
		t.Error("a proxy's 503 to a GET is transient")
	}
	// A coordinator 503 with a permanent code stays permanent, even on a GET.
	if IsTransient(&APIError{Method: http.MethodGet, HTTPStatus: 503, ErrorCode: CodeRedisNotConfigured}) {
		t.Error("503 REDIS_NOT_CONFIGURED must stay permanent")
	}
}
