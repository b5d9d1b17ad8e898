package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"

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
	secrets   []string     // the call's own secrets (a login's password), redacted from errors
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
	if _, ok := ctx.Deadline(); !ok {
		// Reads and data sources have no timeouts of their own: without a
		// deadline a server's Retry-After, or a trickling answer, could hold
		// the plan for as long as it likes.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.readTimeout)
		defer cancel()
	}
	var body []byte
	if cl.body != nil {
		var err error
		if body, err = json.Marshal(cl.body); err != nil {
			return fmt.Errorf("%s %s: encoding request body: %w", cl.method, c.apiPath+cl.path, err)
		}
		c.traceBody(ctx, cl, "coordinator request body", map[string]any{
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
		red := c.redactFor(cl)
		var respBody []byte
		var readErr error
		if resp.ContentLength > maxResponseBytes && resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			// Declared too large: no need to read 32 MiB to say so.
			readErr = &tooLargeError{atLeast: resp.ContentLength}
		} else {
			respBody, readErr = io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
		}
		_ = resp.Body.Close()
		if readErr == nil && len(respBody) > maxResponseBytes {
			readErr = &tooLargeError{atLeast: max(resp.ContentLength, maxResponseBytes+1)}
		}
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
				attempts: st.attempt, role: cl.role, authMode: mode, now: c.now(), traits: cl.traits(), redact: red,
			})
			switch {
			case plainHTTPToTLSServer(resp.StatusCode, respBody):
				// The hint is the point, not the server's 400: no APIError in the chain.
				return st.connectionError(ConnectionHTTPToHTTPS, fmt.Errorf("the server answered %d %q", resp.StatusCode, red.excerpt(respBody)))
			case classifyCall(cl.traits(), apiErr.HTTPStatus, apiErr.ErrorCode) == classAmbiguous:
				return &AmbiguousError{Kind: AmbiguousNotCoordinatorAnswer, Method: cl.method, Path: c.apiPath + cl.path, RequestID: cl.requestID,
					Attempts: st.attempt, Status: resp.StatusCode, Err: apiErr}
			}
			return apiErr
		}
		if cl.out == nil {
			return nil
		}
		c.traceBody(ctx, cl, "coordinator response body", map[string]any{
			"method": cl.method, "path": c.apiPath + cl.path, "request_id": cl.requestID, "status": resp.StatusCode,
		}, respBody)
		if err := json.Unmarshal(respBody, cl.out); err != nil {
			quoted := red.excerpt(respBody)
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
		// The single gate before every retry's send: checkRetry decides
		// before the backoff sleep, and an interrupt during the sleep must
		// still stop a mutation (operation.go).
		PrepareRetry: func(*http.Request) error {
			err := OperationEnded(ctx)
			if err == nil || !cl.mutation() {
				return nil
			}
			if _, answered := st.lastErr.(*APIError); !answered {
				if _, _, isConn := connectionFailure(st.lastErr); !isConn {
					// The earlier attempt may have reached the coordinator:
					// its failure is the outcome, not "nothing was sent".
					return st.lastErr
				}
			}
			return &NotSentError{Method: cl.method, Path: c.apiPath + cl.path, RequestID: cl.requestID, Err: err, Last: st.lastErrWithAttempts()}
		},
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
	var notSent *NotSentError
	switch {
	case errors.As(err, &deadlineErr), errors.As(err, &ambiguous), errors.As(err, &notSent):
		return nil, st, err
	case ctx.Err() != nil && st.lastErr != nil && st.willRetry:
		// Cancelled during the backoff sleep.
		return nil, st, &InterruptedWaitError{Method: cl.method, Path: c.apiPath + cl.path, RequestID: cl.requestID,
			Attempts: st.attempt, Err: ctx.Err(), Last: st.lastErrWithAttempts()}
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
	kind, _, isConn := connectionFailure(err)
	// Transport errors may quote the wire (a malformed answer echoing the request).
	err = &redactedError{err: err, r: c.redactFor(cl)}
	if isConn && st != nil {
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

// tooLargeError is an answer longer than maxResponseBytes: the client's own
// limit, not a malformed answer.
type tooLargeError struct{ atLeast int64 }

func (e *tooLargeError) Error() string {
	size := fmt.Sprintf("more than %d MiB", maxResponseBytes>>20)
	if e.atLeast > maxResponseBytes+1 {
		size = "at least " + formatBytes(e.atLeast) // from Content-Length
	}
	return fmt.Sprintf("the answer is larger than the provider's limit of %d MiB on one response (it was %s), so it was not read; "+
		"the coordinator's answers are far smaller, so check that endpoint points at the coordinator itself", maxResponseBytes>>20, size)
}

// formatBytes renders n in MiB with one decimal, or in bytes below 1 MiB.
func formatBytes(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	return strconv.FormatFloat(math.Floor(float64(n)*10/(1<<20))/10, 'f', -1, 64) + " MiB"
}
