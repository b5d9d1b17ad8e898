package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// maxResponseBytes bounds how much of a response is read; the largest
// legitimate answer (every group with assignment summaries) is far smaller.
const maxResponseBytes = 32 << 20

// call describes one logical API call.
type call struct {
	method    string
	path      string // escaped, relative to the API base path, e.g. "/streams/orders/scale"
	operation string // short name for request ids and logs, e.g. "scale-stream"
	requestID string // "" = generate
	body      any    // nil = no body
	resend    resendPolicy
	create    bool         // create stream/group: a provisioning failure is not re-sent
	role      string       // role named by a 403; "" = derived from method
	fixedAuth *authHeader  // used instead of the client's auth (login), never re-logged in
	authMode  string       // overrides the client's mode in 401 messages
	out       any          // decode target for a 2xx body, nil = ignore
	secret    bool         // the response carries a secret: never quote it in errors
	expect    *answerCheck // what a 2xx body must be beyond decoding (decode_answer.go); nil = anything that decodes
}

// do runs one call through authentication, transport retries and error
// decoding.
// A 401 in login mode triggers one re-login and one re-send with the same
// X-Request-Id: the interceptor rejects before the controller runs, so even a
// create cannot have been applied.
func (c *Client) do(ctx context.Context, cl *call) error {
	if cl.requestID = sanitizeID(cl.requestID); cl.requestID == "" {
		cl.requestID = c.NewRequestID(cl.operation)
	}
	if cl.role == "" {
		cl.role = "WRITE"
		if cl.method == http.MethodGet {
			cl.role = "READ"
		}
	}
	ctx = c.logContext(ctx)
	var body []byte
	if cl.body != nil {
		var err error
		if body, err = json.Marshal(cl.body); err != nil {
			return fmt.Errorf("%s %s: encoding request body: %w", cl.method, c.apiPath+cl.path, err)
		}
		traceBody(ctx, "coordinator request body", map[string]any{
			"method": cl.method, "path": c.apiPath + cl.path, "request_id": cl.requestID,
		}, body)
	}
	for reauthed := false; ; reauthed = true {
		// Every send, the first and the re-send after a re-login, starts
		// here; transport retries are held to the same rule in checkRetry.
		if err := c.mayStart(ctx, cl); err != nil {
			return err
		}
		var auth authHeader
		if cl.fixedAuth != nil {
			auth = *cl.fixedAuth
			auth.fromLogin = false
		} else {
			var err error
			if auth, err = c.auth.header(ctx); err != nil {
				return err
			}
			ctx = maskSecrets(ctx, auth.secret)
			// A login can take a round trip, or wait on another caller's:
			// an interrupt during it still stops the send.
			if err := c.mayStart(ctx, cl); err != nil {
				return err
			}
		}
		resp, st, err := c.send(ctx, cl, body, auth)
		if err != nil {
			return err
		}
		respBody, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		_ = resp.Body.Close()
		if readErr != nil {
			if cl.resend == resendNever && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
				return c.unreadableAnswer(cl, st, resp.StatusCode, readErr)
			}
			return c.networkFailure(cl, st, readErr)
		}
		if resp.StatusCode == http.StatusUnauthorized && auth.fromLogin && !reauthed {
			logDebug(ctx, "coordinator rejected the login token; logging in again and re-sending", map[string]any{
				"method": cl.method, "path": c.apiPath + cl.path, "request_id": cl.requestID,
			})
			c.auth.invalidate(auth.secret)
			continue
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			mode := cl.authMode
			if mode == "" {
				mode = auth.mode
			}
			apiErr := decodeError(responseInfo{
				method: cl.method, path: c.apiPath + cl.path, requestID: cl.requestID,
				status: resp.StatusCode, header: resp.Header, body: respBody,
				attempts: st.attempt, role: cl.role, authMode: mode, now: c.now(), traits: cl.traits(),
			})
			switch {
			case plainHTTPToTLSServer(resp.StatusCode, respBody):
				return st.connectionError(ConnectionHTTPToHTTPS, apiErr)
			case classifyCall(cl.traits(), apiErr.HTTPStatus, apiErr.ErrorCode) == classAmbiguous:
				return &AmbiguousError{Kind: AmbiguousNotCoordinatorAnswer, Method: cl.method, Path: c.apiPath + cl.path, RequestID: cl.requestID,
					Attempts: st.attempt, Status: resp.StatusCode, Err: apiErr}
			}
			return apiErr
		}
		if cl.out == nil {
			return nil
		}
		traceBody(ctx, "coordinator response body", map[string]any{
			"method": cl.method, "path": c.apiPath + cl.path, "request_id": cl.requestID, "status": resp.StatusCode,
		}, respBody)
		if err := json.Unmarshal(respBody, cl.out); err != nil {
			quoted := excerpt(respBody)
			if cl.secret {
				quoted = "(withheld: it may contain a token)"
			}
			decodeErr := fmt.Errorf("%s %s: decoding %d response (request id %s): %w; body: %s",
				cl.method, c.apiPath+cl.path, resp.StatusCode, cl.requestID, err, quoted)
			if cl.resend == resendNever {
				return c.unreadableAnswer(cl, st, resp.StatusCode, decodeErr)
			}
			return decodeErr
		}
		return c.checkAnswer(cl, st, resp.StatusCode, respBody)
	}
}

// mayStart refuses a send that would start after its operation ended (the
// interrupt rule, operation.go) or on a context already done: nothing of it
// can have reached the coordinator.
func (c *Client) mayStart(ctx context.Context, cl *call) error {
	if err := OperationEnded(ctx); err != nil && cl.mutation() {
		return &NotSentError{Method: cl.method, Path: c.apiPath + cl.path, RequestID: cl.requestID, Err: err}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s %s: not sent: %w", cl.method, c.apiPath+cl.path, err)
	}
	return nil
}

// send performs the transport attempts of one authenticated request. It
// returns the final response (2xx or not) or a classified error.
func (c *Client) send(ctx context.Context, cl *call, body []byte, auth authHeader) (*http.Response, *attemptState, error) {
	var raw any
	if body != nil {
		raw = body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, cl.method, c.origin+c.apiPath+cl.path, raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s %s: building request: %w", cl.method, c.apiPath+cl.path, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("User-Agent", c.userAgent)
	// The same id on every attempt (and after a re-login) lets the audit log
	// tie the attempts of one logical operation together.
	req.Header.Set("X-Request-Id", cl.requestID)
	if auth.value != "" {
		req.Header.Set("Authorization", auth.value)
	}

	st := &attemptState{c: c, call: cl}
	// A retryablehttp.Client per call is a small struct; it lets the hooks
	// carry this call's attempt state without any shared mutable fields.
	// Its RetryWaitMin/Max stay unset: checkRetry computes each wait (from
	// c.retryWaitMin/Max, Retry-After and the connect budget) and Backoff
	// only hands that wait back.
	rc := &retryablehttp.Client{
		HTTPClient:     c.http,
		RetryMax:       c.maxRetries,
		RequestLogHook: st.beforeAttempt,
		CheckRetry:     st.checkRetry,
		Backoff:        st.backoff,
		ErrorHandler:   retryablehttp.PassthroughErrorHandler,
	}
	resp, err := rc.Do(req)
	if err == nil {
		return resp, st, nil
	}
	if resp != nil {
		_ = resp.Body.Close()
	}
	var deadlineErr *DeadlineError
	var ambiguous *AmbiguousError
	switch {
	case errors.As(err, &deadlineErr), errors.As(err, &ambiguous):
		return nil, st, err
	case ctx.Err() != nil && st.lastErr != nil && st.willRetry:
		// Cancelled during the backoff sleep.
		return nil, st, newAbortedError(cl, c.apiPath+cl.path, ctx.Err(), st.lastErr)
	}
	return nil, st, c.networkFailure(cl, st, err)
}

// networkFailure wraps a failure without a usable response. One that never
// reached the coordinator is a ConnectionError; for a create whose bytes may
// have left the machine it is ambiguous; otherwise it is a plain transport
// error.
func (c *Client) networkFailure(cl *call, st *attemptState, err error) error {
	attempts := 0
	if st != nil {
		attempts = st.attempt
	}
	if kind, _, ok := connectionFailure(err); ok && st != nil {
		return st.connectionError(kind, err)
	}
	if cl.resend == resendNever {
		return &AmbiguousError{Kind: AmbiguousNoAnswer, Method: cl.method, Path: c.apiPath + cl.path, RequestID: cl.requestID, Attempts: attempts, Err: err}
	}
	return &transportError{method: cl.method, path: c.apiPath + cl.path, requestID: cl.requestID, attempts: attempts, err: err}
}

// unreadableAnswer is a mutation's 2xx whose body could not be read or
// decoded: most likely applied, but what it made is unknown.
func (c *Client) unreadableAnswer(cl *call, st *attemptState, status int, err error) error {
	return &AmbiguousError{Kind: AmbiguousUnreadableAnswer, Method: cl.method, Path: c.apiPath + cl.path, RequestID: cl.requestID,
		Attempts: st.attempt, Status: status, Err: err}
}

func newAbortedError(cl *call, path string, ctxErr, last error) error {
	return &abortedError{method: cl.method, path: path, requestID: cl.requestID, ctxErr: ctxErr, last: last}
}

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
		fields["error"] = err.Error()
		kind, retryable, isConn := connectionFailure(err)
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
			header: resp.Header, body: body, attempts: st.attempt, role: cl.role, now: c.now(),
		})
		traceBody(ctx, "coordinator error response body", map[string]any{
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
	if deadline, ok := ctx.Deadline(); ok {
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
