package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A Retry-After beyond retry_wait_max (or the coordinator's 60 s window)
// fails at once, quoting the server's value, even on a read without a
// deadline: no wait, one request.
func TestHugeRetryAfterFailsAtOnce(t *testing.T) {
	for _, after := range []string{"1000000000", "61", time.Now().Add(48 * time.Hour).UTC().Format(http.TimeFormat)} {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Retry-After", after)
			writeCoordError(w, http.StatusTooManyRequests, CodeRateLimitExceeded, "Coordinator API rate limit exceeded")
		})
		c := newTestClient(t, f.URL, nil)
		c.retryAfterUnit = time.Second // production semantics: a wait would really be that long
		_, err := c.GetGroup(context.Background(), "orders", "billing")
		var de *DeadlineError
		if !errors.As(err, &de) || de.Ceiling != time.Minute || !IsRateLimited(err) || IsTransient(err) {
			t.Fatalf("Retry-After %s: want a DeadlineError with the 60s ceiling, got %v", after, err)
		}
		if want := `the server asked to retry after Retry-After: ` + strconv.Quote(after) + `, longer than the longest wait the provider honours (60s`; !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
		if got := f.count(); got != 1 {
			t.Errorf("Retry-After %s: requests = %d, want 1", after, got)
		}
	}
}

// retry_wait_max raises the ceiling: a Retry-After within it is honoured.
func TestRetryAfterWithinRetryWaitMaxIsHonoured(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "90")
			writeCoordError(w, http.StatusTooManyRequests, CodeRateLimitExceeded, "Coordinator API rate limit exceeded")
			return
		}
		writeJSON(w, http.StatusOK, groupJSON("orders", "billing", 4))
	})
	c := newTestClient(t, f.URL, func(cfg *Config) { cfg.RetryWaitMax = 2 * time.Minute })
	if _, err := c.GetGroup(context.Background(), "orders", "billing"); err != nil {
		t.Fatalf("want the retry after Retry-After: 90 to succeed, got %v", err)
	}
}

// A call on a context without a deadline (a read, a data source) gets
// ReadTimeout: a wait longer than what is left fails at once.
func TestReadsWithoutDeadlineAreBounded(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeCoordError(w, http.StatusServiceUnavailable, CodeCoordinatorStateMutexUnavailable, "mutex")
	})
	c := newTestClient(t, f.URL, func(cfg *Config) {
		cfg.RetryWaitMin, cfg.RetryWaitMax = time.Hour, time.Hour
		cfg.ReadTimeout = 10 * time.Minute
	})
	_, err := c.GetGroup(context.Background(), "orders", "billing")
	var de *DeadlineError
	if !errors.As(err, &de) || de.Remaining > 10*time.Minute || de.Ceiling != 0 {
		t.Fatalf("want a DeadlineError within the 10m read bound, got %v", err)
	}
	if f.count() != 1 {
		t.Errorf("requests = %d, want 1", f.count())
	}
}

// An interrupt during a Retry-After wait says so, not "still exceeded after
// retrying".
func TestInterruptedRetryAfterWaitSaysInterrupted(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Retry-After", "30")
		writeCoordError(w, http.StatusTooManyRequests, CodeRateLimitExceeded, "Coordinator API rate limit exceeded")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newTestClient(t, f.URL, func(cfg *Config) {
		cfg.HTTPTransport = cancelAfterResponse{base: http.DefaultTransport, cancel: cancel}
	})
	c.retryAfterUnit = time.Second
	_, err := c.GetGroup(ctx, "orders", "billing")
	var iw *InterruptedWaitError
	if !errors.As(err, &iw) || !errors.Is(err, context.Canceled) || !IsRateLimited(err) {
		t.Fatalf("want an InterruptedWaitError around the 429, got %v", err)
	}
	if !strings.Contains(err.Error(), "the wait to retry was interrupted after 1 attempt(s), and nothing more was sent") {
		t.Errorf("message %q", err)
	}
}

// An answer longer than the client's limit is reported as that limit, with
// the size, not as malformed JSON.
func TestTooLargeAnswerNamesTheLimit(t *testing.T) {
	// Built once, without json.Marshal: escaping-checking 40 MiB per request
	// under the race detector took longer than the request timeout.
	b := []byte(`{"streamPrefix":"orders","consumerGroup":"billing","shardCount":4,"pad":"` + strings.Repeat("x", 40<<20) + `"}`)
	big := func(w http.ResponseWriter, declare bool) {
		w.Header().Set("Content-Type", "application/json")
		if declare {
			w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		}
		_, _ = w.Write(b)
	}
	for _, tc := range []struct {
		declare bool
		want    string
	}{
		{true, "(it was at least 40 MiB)"},
		{false, "(it was more than 32 MiB)"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { big(w, tc.declare) }))
		// Moving 32 MiB under the race detector on a loaded machine took
		// longer than the helpers' 5 s request timeout; the point here is
		// the size limit, so the timeout must not be what ends the read.
		c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.RequestTimeout = 10 * time.Minute })
		_, err := c.GetGroup(context.Background(), "orders", "billing")
		srv.Close()
		var syntaxErr *json.SyntaxError
		if err == nil || errors.As(err, &syntaxErr) {
			t.Fatalf("want a size-limit error, got %v", err)
		}
		if !strings.Contains(err.Error(), "larger than the provider's limit of 32 MiB on one response "+tc.want) {
			t.Errorf("message %q lacks %q", err, tc.want)
		}
	}
}

// http:// to a TLS server is reported by its fix, without the server's 400
// as an APIError that would hide it.
func TestHTTPToTLSServerIsNotAnAPIError(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	c := newTestClient(t, strings.Replace(srv.URL, "https://", "http://", 1), nil)
	_, err := c.GetGroup(context.Background(), "orders", "billing")
	if _, isAPI := AsAPIError(err); isAPI || UnreachableKind(err) != ConnectionHTTPToHTTPS {
		t.Fatalf("want a ConnectionError without an APIError, got %v", err)
	}
	if !strings.Contains(err.Error(), "use an https:// endpoint") {
		t.Errorf("message %q", err)
	}
}
