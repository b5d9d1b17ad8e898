package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// attemptState follows the attempts of one call. retryablehttp runs the
// hooks sequentially for a request, so no locking is needed.
type attemptState struct {
	c       *Client
	call    *call
	attempt int
	first   time.Time // start of the first attempt
	started time.Time // start of the current attempt
	// connFailSince is the start of the attempt that began the current run
	// of connection failures (zero after any answer); the run may last
	// c.connectBudget.
	connFailSince time.Time
	wait          time.Duration // decided by checkRetry, returned by backoff
	willRetry     bool
	lastErr       error // the failure behind the latest retry decision
}

func (st *attemptState) beforeAttempt(_ retryablehttp.Logger, _ *http.Request, retryNumber int) {
	st.attempt = retryNumber + 1
	st.started = time.Now()
	if retryNumber == 0 {
		st.first = st.started
	}
	st.willRetry = false
}

// connectionError builds the ConnectionError of this call.
func (st *attemptState) connectionError(kind ConnectionErrorKind, err error) *ConnectionError {
	cl := st.call
	return &ConnectionError{
		Kind: kind, Endpoint: st.c.origin, Method: cl.method, Path: st.c.apiPath + cl.path, RequestID: cl.requestID,
		Attempts: st.attempt, Elapsed: time.Since(st.first), Err: err,
	}
}

func (cl *call) traits() callTraits {
	return callTraits{method: cl.method, create: cl.create, resend: cl.resend}
}

func (st *attemptState) backoff(_, _ time.Duration, _ int, _ *http.Response) time.Duration {
	return st.wait
}

// checkRetry is where every retry decision is made, because it is the only
// hook that sees the context: classification by the retry table, the resend
// policy for network errors, the wait, and the deadline check.
func (st *attemptState) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	c, cl := st.c, st.call
	path := c.apiPath + cl.path
	fields := map[string]any{
		"method": cl.method, "path": path, "attempt": st.attempt, "request_id": cl.requestID,
		"duration_ms": time.Since(st.started).Milliseconds(),
	}
	var (
		retry      bool
		reason     string
		retryAfter time.Duration
		hasAfter   bool
		connRetry  bool // a connection failure, retried within c.connectBudget
	)
	if err == nil {
		st.connFailSince = time.Time{}
	}
	if cl.mutation() && OperationEnded(ctx) != nil {
		// A retry would be a new send after the operation ended: the
		// previous attempt's outcome is the answer (operation.go).
		logDebug(ctx, cl.method+" "+path+" not retried: the operation ended", fields)
		return false, nil //nolint:nilerr // the attempt's error is surfaced by send, not by CheckRetry
	}
	switch {
	case err != nil:
		kind, retryable, isConn := connectionFailure(err)
		err = &redactedError{err: err, r: c.redactFor(cl)} // it may quote the wire
		fields["error"] = err.Error()
		switch {
		case ctx.Err() != nil:
			logDebug(ctx, cl.method+" "+path+" failed: "+ctx.Err().Error(), fields)
			// Not retrying; the caller reports the context error with the last failure.
			return false, nil //nolint:nilerr // the error is surfaced by send, not by CheckRetry

		case isConn && !retryable:
			reason = "retrying cannot fix it: " + string(kind)
		case isConn:
			if st.connFailSince.IsZero() {
				st.connFailSince = st.started
			}
			retry, reason, connRetry = true, "could not connect: "+string(kind), true
		case cl.resend == resendNever:
			reason = "not re-sent: the request may have reached the coordinator"
		default:
			retry, reason = true, "network error"
		}
		st.lastErr = err
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		fields["status"] = resp.StatusCode
		logDebug(ctx, fmt.Sprintf("%s %s -> %d", cl.method, path, resp.StatusCode), fields)
		return false, nil
	default:
		fields["status"] = resp.StatusCode
		body := peekBody(resp)
		apiErr := decodeError(responseInfo{
			method: cl.method, path: path, requestID: cl.requestID, status: resp.StatusCode,
			header: resp.Header, body: body, attempts: st.attempt, role: cl.role, now: c.now(), redact: c.redactFor(cl),
		})
		c.traceBody(ctx, cl, "coordinator error response body", map[string]any{
			"method": cl.method, "path": path, "request_id": cl.requestID, "status": resp.StatusCode,
		}, body)
		fields["error_code"] = apiErr.ErrorCode
		class := classifyCall(cl.traits(), resp.StatusCode, apiErr.ErrorCode)
		retry = class == classTransient || class == classRateLimited
		reason = fmt.Sprintf("%d %s is %s", resp.StatusCode, apiErr.ErrorCode, class)
		retryAfter, hasAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.now())
		st.lastErr = apiErr
	}
	line := cl.method + " " + path + " failed"
	if resp != nil {
		line = fmt.Sprintf("%s %s -> %d", cl.method, path, resp.StatusCode)
	}
	fields["reason"] = reason
	if !retry {
		logDebug(ctx, line+"; not retrying", fields)
		return false, nil
	}
	// The ceiling first: a server's refusal to be retried within any wait
	// the provider honours is the point, even when no retry is left.
	ceiling := max(c.retryWaitMax, rateLimitWindow)
	if hasAfter && retryAfter > ceiling {
		logDebug(ctx, line+"; Retry-After is longer than the provider waits", fields)
		return false, &DeadlineError{Wait: retryAfter, FromRetryAfter: true, RetryAfter: c.redactFor(cl).excerpt([]byte(resp.Header.Get("Retry-After"))),
			Ceiling: ceiling, Last: st.lastErrWithAttempts()}
	}
	if st.attempt > c.maxRetries {
		logDebug(ctx, line+"; retries exhausted", fields)
		return true, nil // retryablehttp stops and hands back this response
	}
	wait := backoff(c.retryWaitMin, c.retryWaitMax, st.attempt)
	if hasAfter {
		wait = c.scaleRetryAfter(retryAfter)
	}
	if connRetry {
		// Connection failures get their own short budget: enough to ride
		// out a restart, not max_retries × backoff against a wrong endpoint.
		left := c.connectBudget - time.Since(st.connFailSince)
		if left <= 0 {
			fields["connect_budget_ms"] = c.connectBudget.Milliseconds()
			logDebug(ctx, line+"; connection retry budget spent", fields)
			return false, nil
		}
		wait = min(wait, left)
	}
	deadline, ok := ctx.Deadline()
	if cl.mutation() {
		deadline, ok = operationDeadline(ctx)
	}
	if ok {
		if remaining := max(deadline.Sub(c.now()), 0); wait > remaining {
			logDebug(ctx, line+"; next retry would be past the deadline", fields)
			return false, &DeadlineError{Wait: wait, Remaining: remaining, FromRetryAfter: hasAfter, Last: st.lastErrWithAttempts()}
		}
	}
	st.wait, st.willRetry = wait, true
	fields["wait_ms"] = wait.Milliseconds()
	logDebug(ctx, fmt.Sprintf("%s; retrying in %s", line, wait), fields)
	return true, nil
}

// lastErrWithAttempts returns the latest failure wrapped with call context.
func (st *attemptState) lastErrWithAttempts() error {
	if apiErr, ok := st.lastErr.(*APIError); ok {
		return apiErr
	}
	cl := st.call
	return &transportError{method: cl.method, path: st.c.apiPath + cl.path, requestID: cl.requestID, attempts: st.attempt, err: st.lastErr}
}

// scaleRetryAfter converts a Retry-After duration to wall time; identity in
// production (retryAfterUnit == time.Second).
func (c *Client) scaleRetryAfter(d time.Duration) time.Duration {
	if c.retryAfterUnit == time.Second {
		return d
	}
	return time.Duration(float64(d) / float64(time.Second) * float64(c.retryAfterUnit))
}

// peekBody reads an error body and puts an identical reader back, so the
// final decode (after retries stop) still sees it.
func peekBody(resp *http.Response) []byte {
	if resp.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return b
}
