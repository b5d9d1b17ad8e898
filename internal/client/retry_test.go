package client

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestClassifyTable(t *testing.T) {
	cases := []struct {
		status int
		code   string
		want   retryClass
	}{
		{429, CodeRateLimitExceeded, classRateLimited},
		{429, "", classRateLimited}, // a proxy's 429 without a code is still rate limiting
		{409, CodeStateVersionConflict, classTransient},
		{409, CodeMetadataSyncInProgress, classTransient},
		{503, CodeCoordinatorStateMutexUnavailable, classTransient},
		{503, CodeCoordinatorTerminating, classTransient},
		{503, CodeRedisStreamProvisioningFailed, classTransient},
		{503, CodeRedisNotConfigured, classPermanent},
		{503, "", classPermanent},
		{409, CodeActiveMigrationExists, classPermanent},
		{409, CodeGroupAlreadyExists, classPermanent},
		{409, CodeStateVersionConflict + "X", classPermanent},
		{503, CodeStateVersionConflict, classPermanent}, // code only counts with its status
		{400, CodeInvalidRequest, classPermanent},
		{500, "", classPermanent},
	}
	for _, tc := range cases {
		if got := classify(tc.status, tc.code); got != tc.want {
			t.Errorf("classify(%d, %q) = %v, want %v", tc.status, tc.code, got, tc.want)
		}
	}
}

func TestTransientCodesAreRetried(t *testing.T) {
	cases := []struct {
		status int
		code   string
	}{
		{409, CodeStateVersionConflict},
		{409, CodeMetadataSyncInProgress},
		{503, CodeCoordinatorStateMutexUnavailable},
		{503, CodeCoordinatorTerminating},
		{503, CodeRedisStreamProvisioningFailed},
		{429, CodeRateLimitExceeded},
	}
	for _, tc := range cases {
		t.Run(tc.code, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n <= 2 {
					if tc.status == http.StatusTooManyRequests {
						w.Header().Set("Retry-After", "1")
					}
					writeCoordError(w, tc.status, tc.code, "try again")
					return
				}
				writeMigration(w, http.StatusAccepted)
			})
			c := newTestClient(t, f.URL, nil)
			m, err := c.ScaleGroup(context.Background(), "orders", "billing", 8, Mutation{})
			if err != nil {
				t.Fatalf("ScaleGroup: %v", err)
			}
			if m.ReshardingID != "reshard-1" {
				t.Errorf("reshardingId = %q", m.ReshardingID)
			}
			if got := f.count(); got != 3 {
				t.Errorf("requests = %d, want 3 (two retries)", got)
			}
		})
	}
}

func TestPermanentErrorsAreNotRetried(t *testing.T) {
	cases := []struct {
		name   string
		status int
		code   string
		empty  bool
	}{
		{"400", 400, CodeInvalidRequest, false},
		{"401", 401, "", true},
		{"403", 403, "", true},
		{"404", 404, CodeGroupNotFound, false},
		{"409 exists", 409, CodeGroupAlreadyExists, false},
		{"409 active migration", 409, CodeActiveMigrationExists, false},
		{"422", 422, CodeRollbackNotAllowed, false},
		{"503 redis not configured", 503, CodeRedisNotConfigured, false},
		{"500 generic", 500, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if tc.empty {
					w.WriteHeader(tc.status)
					return
				}
				writeCoordError(w, tc.status, tc.code, "no")
			})
			c := newTestClient(t, f.URL, nil)
			_, err := c.ScaleGroup(context.Background(), "orders", "billing", 8, Mutation{})
			apiErr, ok := AsAPIError(err)
			if !ok {
				t.Fatalf("want *APIError, got %T %v", err, err)
			}
			if apiErr.HTTPStatus != tc.status || apiErr.ErrorCode != tc.code || apiErr.Attempts != 1 {
				t.Errorf("got status %d code %q attempts %d", apiErr.HTTPStatus, apiErr.ErrorCode, apiErr.Attempts)
			}
			if got := f.count(); got != 1 {
				t.Errorf("requests = %d, want 1", got)
			}
		})
	}
}

func TestRetriesExhaustedKeepLastErrorCode(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeCoordError(w, http.StatusConflict, CodeStateVersionConflict, "attempt "+strconv.Itoa(n))
	})
	c := newTestClient(t, f.URL, func(cfg *Config) { cfg.MaxRetries = 2 })
	_, err := c.DeleteGroup(context.Background(), "orders", "billing", false, Mutation{})
	apiErr, ok := AsAPIError(err)
	if !ok {
		t.Fatalf("want *APIError, got %T %v", err, err)
	}
	if apiErr.ErrorCode != CodeStateVersionConflict || apiErr.Attempts != 3 || apiErr.Message != "attempt 3" {
		t.Errorf("got code %q attempts %d message %q", apiErr.ErrorCode, apiErr.Attempts, apiErr.Message)
	}
	if !strings.Contains(err.Error(), "3 attempts") {
		t.Errorf("error %q does not mention the attempts", err)
	}
	if got := f.count(); got != 3 {
		t.Errorf("requests = %d, want 3", got)
	}
}

func TestMaxRetriesZeroDisablesRetries(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeCoordError(w, http.StatusServiceUnavailable, CodeCoordinatorTerminating, "bye")
	})
	c := newTestClient(t, f.URL, func(cfg *Config) { cfg.MaxRetries = 0 })
	_, err := c.GetGroup(context.Background(), "orders", "billing")
	if ErrorCode(err) != CodeCoordinatorTerminating {
		t.Fatalf("err = %v", err)
	}
	if got := f.count(); got != 1 {
		t.Errorf("requests = %d, want 1", got)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	cases := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"3", 3 * time.Second, true},
		{" 10 ", 10 * time.Second, true},
		{"0", 0, true},
		{now.Add(5 * time.Second).Format(http.TimeFormat), 5 * time.Second, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{now.Add(90 * time.Second).Format(time.RFC850), 90 * time.Second, true},
		{now.Add(2 * time.Second).Format(time.ANSIC), 2 * time.Second, true},
		{"99999999999999999999999", maxRetryAfter, true},
		{"", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	}
	for _, tc := range cases {
		got, ok := parseRetryAfter(tc.in, now)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.wantOK)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, seed := range []string{"0", "120", "Tue, 04 Mar 2025 05:06:17 GMT", "Monday, 02-Jan-06 15:04:05 MST", "x", "-5", "18446744073709551616"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := parseRetryAfter(v, now)
		// A refused Retry-After is quoted as one bounded line, whatever it
		// holds: attempt.go passes the header through the redactor's excerpt
		// (valid UTF-8, at most maxExcerpt bytes), and %q escapes each byte
		// into at most 10 characters ("\U0010ffff" for four bytes).
		if r := (&DeadlineError{Wait: d, Ceiling: time.Minute, RetryAfter: redactor{}.excerpt([]byte(v))}).Reason(); strings.ContainsAny(r, "\r\n") || len(r) > 4*maxExcerpt+300 {
			t.Fatalf("refusing %q quotes it as %q", v, r)
		}
		if !ok {
			if d != 0 {
				t.Fatalf("not ok but d = %v", d)
			}
			return
		}
		if d < 0 || d > maxRetryAfter {
			t.Fatalf("parseRetryAfter(%q) = %v out of range", v, d)
		}
		if s := strings.TrimSpace(v); isDigits(s) {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil && n < int64(maxRetryAfter/time.Second) && d != time.Duration(n)*time.Second {
				t.Fatalf("parseRetryAfter(%q) = %v, want %ds", v, d, n)
			}
		}
	})
}

func TestRetryWaitHonoursRetryAfter(t *testing.T) {
	c := newTestClient(t, "http://coordinator.invalid", nil)
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	c.now = func() time.Time { return now }
	cases := []struct {
		name, header string
		status       int
		code         string
		want         time.Duration
	}{
		{"seconds on 429", "7", 429, CodeRateLimitExceeded, 7 * time.Millisecond},
		{"http-date on 429", now.Add(4 * time.Second).Format(http.TimeFormat), 429, CodeRateLimitExceeded, 4 * time.Millisecond},
		{"seconds on a transient 503", "5", 503, CodeCoordinatorTerminating, 5 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := &attemptState{c: c, call: &call{method: http.MethodPost, path: "/streams/orders/scale", requestID: "id"}}
			st.beforeAttempt(nil, nil, 0)
			resp := &http.Response{StatusCode: tc.status, Header: http.Header{"Retry-After": {tc.header}},
				Body: newBody(`{"status":"X","errorCode":"` + tc.code + `","message":"m"}`)}
			retry, err := st.checkRetry(context.Background(), resp, nil)
			if !retry || err != nil {
				t.Fatalf("checkRetry = %v, %v", retry, err)
			}
			if got := st.backoff(0, 0, 0, resp); got != tc.want {
				t.Errorf("wait = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBackoffStaysWithinBounds(t *testing.T) {
	minWait, maxWait := 10*time.Millisecond, 80*time.Millisecond
	for attempt := 1; attempt <= 200; attempt++ {
		if d := backoff(minWait, maxWait, attempt); d < minWait || d > maxWait {
			t.Fatalf("backoff(attempt %d) = %v outside [%v, %v]", attempt, d, minWait, maxWait)
		}
	}
	// Later attempts must be able to exceed the minimum, or it is not exponential.
	grew := false
	for i := 0; i < 50 && !grew; i++ {
		grew = backoff(minWait, maxWait, 5) > minWait
	}
	if !grew {
		t.Error("backoff never grew beyond the minimum")
	}
}

func TestRetryAfterBeyondDeadlineFailsAtOnce(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Retry-After", "45")
		writeCoordError(w, http.StatusTooManyRequests, CodeRateLimitExceeded, "Coordinator API rate limit exceeded")
	})
	c := newTestClient(t, f.URL, nil)
	c.retryAfterUnit = time.Second // production semantics: the wait really is 45s
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.ScaleStream(ctx, "orders", 4, Mutation{})
	if !errors.Is(err, ErrRetryAfterBeyondDeadline) {
		t.Fatalf("want ErrRetryAfterBeyondDeadline, got %v", err)
	}
	if !strings.Contains(err.Error(), "coordinator asked to retry after 45s, which is past the operation deadline (") {
		t.Errorf("message %q", err)
	}
	if ErrorCode(err) != CodeRateLimitExceeded || !IsRateLimited(err) {
		t.Errorf("errorCode lost: %v", err)
	}
	if IsTransient(err) {
		t.Error("a deadline error must not count as transient")
	}
	if got := f.count(); got != 1 {
		t.Errorf("requests = %d, want 1", got)
	}
}

func TestBackoffBeyondDeadlineFailsAtOnce(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeCoordError(w, http.StatusConflict, CodeStateVersionConflict, "busy")
	})
	c := newTestClient(t, f.URL, func(cfg *Config) {
		cfg.RetryWaitMin, cfg.RetryWaitMax = time.Hour, time.Hour
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.ScaleStream(ctx, "orders", 4, Mutation{})
	var de *DeadlineError
	if !errors.As(err, &de) || de.FromRetryAfter {
		t.Fatalf("want a backoff DeadlineError, got %v", err)
	}
	if !strings.Contains(err.Error(), "the next retry would wait 3600s") || ErrorCode(err) != CodeStateVersionConflict {
		t.Errorf("message %q", err)
	}
}

// cancelAfterResponse buffers each response and then cancels the call's
// context, so the cancellation deterministically lands in the backoff wait.
type cancelAfterResponse struct {
	base   http.RoundTripper
	cancel context.CancelFunc
}

func (rt cancelAfterResponse) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := rt.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	rt.cancel()
	return resp, nil
}

func TestCancelDuringBackoffReturnsContextAndLastError(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeCoordError(w, http.StatusServiceUnavailable, CodeCoordinatorStateMutexUnavailable, "mutex")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newTestClient(t, f.URL, func(cfg *Config) {
		cfg.RetryWaitMin, cfg.RetryWaitMax = time.Hour, time.Hour
		cfg.ReadTimeout = 2 * time.Hour // longer than the wait, so that the cancel ends it
		cfg.HTTPTransport = cancelAfterResponse{base: http.DefaultTransport, cancel: cancel}
	})
	_, err := c.GetGroup(ctx, "orders", "billing")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if ErrorCode(err) != CodeCoordinatorStateMutexUnavailable {
		t.Errorf("last error lost: %v", err)
	}
	if !strings.Contains(err.Error(), "the wait to retry was interrupted after 1 attempt(s)") {
		t.Errorf("message %q", err)
	}
	if IsTransient(err) {
		t.Error("a cancelled call must not count as transient")
	}
	if got := f.count(); got != 1 {
		t.Errorf("requests = %d, want 1", got)
	}
}

func TestNetworkErrorClassification(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name                 string
		err                  error
		dial, permanent, net bool
	}{
		{"dial refused", &url.Error{Op: "Post", URL: "u", Err: refused}, true, false, true},
		{"proxy dial refused", &url.Error{Op: "Post", URL: "u", Err: &net.OpError{Op: "proxyconnect", Net: "tcp", Err: refused}}, true, false, true},
		{"unknown host", &url.Error{Op: "Get", URL: "u", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Name: "h.invalid", IsNotFound: true}}}, true, true, false},
		{"dns timeout", &url.Error{Op: "Get", URL: "u", Err: &net.DNSError{Name: "h", IsTimeout: true}}, true, false, true},
		{"reset after write", &url.Error{Op: "Post", URL: "u", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}, false, false, true},
		{"unexpected EOF", &url.Error{Op: "Post", URL: "u", Err: io.EOF}, false, false, true},
		{"unknown authority", &url.Error{Op: "Get", URL: "u", Err: x509.UnknownAuthorityError{}}, false, true, false},
	}
	for _, tc := range cases {
		if got := isDialError(tc.err); got != tc.dial {
			t.Errorf("%s: isDialError = %v", tc.name, got)
		}
		if got := isPermanentNetworkError(tc.err); got != tc.permanent {
			t.Errorf("%s: isPermanentNetworkError = %v", tc.name, got)
		}
		if got := isNetworkError(tc.err); got != tc.net {
			t.Errorf("%s: isNetworkError = %v", tc.name, got)
		}
	}
}
