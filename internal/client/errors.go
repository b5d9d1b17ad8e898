package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Coordinator error codes (CONTRACT §3).
const (
	CodeInvalidRequest                   = "INVALID_REQUEST"
	CodeGroupNotFound                    = "GROUP_NOT_FOUND"
	CodeStreamNotFound                   = "STREAM_NOT_FOUND"
	CodeMigrationNotFound                = "MIGRATION_NOT_FOUND"
	CodeGroupAlreadyExists               = "GROUP_ALREADY_EXISTS"
	CodeStreamPrefixAlreadyExists        = "STREAM_PREFIX_ALREADY_EXISTS"
	CodeGroupHasActiveMembers            = "GROUP_HAS_ACTIVE_MEMBERS"
	CodeActiveMigrationExists            = "ACTIVE_MIGRATION_EXISTS"
	CodeMetadataSyncInProgress           = "METADATA_SYNC_IN_PROGRESS"
	CodeStateVersionConflict             = "STATE_VERSION_CONFLICT"
	CodeRollbackNotAllowed               = "ROLLBACK_NOT_ALLOWED"
	CodeRateLimitExceeded                = "RATE_LIMIT_EXCEEDED"
	CodeRedisNotConfigured               = "REDIS_NOT_CONFIGURED"
	CodeRedisStreamProvisioningFailed    = "REDIS_STREAM_PROVISIONING_FAILED"
	CodeCoordinatorStateMutexUnavailable = "COORDINATOR_STATE_MUTEX_UNAVAILABLE"
	CodeCoordinatorTerminating           = "COORDINATOR_TERMINATING"
)

// knownCode reports a documented code: a public word, never a secret, so it
// is kept as sent and the retry logic can decide on it.
func knownCode(code string) bool {
	switch code {
	case CodeInvalidRequest, CodeGroupNotFound, CodeStreamNotFound, CodeMigrationNotFound,
		CodeGroupAlreadyExists, CodeStreamPrefixAlreadyExists, CodeGroupHasActiveMembers,
		CodeActiveMigrationExists, CodeMetadataSyncInProgress, CodeStateVersionConflict,
		CodeRollbackNotAllowed, CodeRateLimitExceeded, CodeRedisNotConfigured,
		CodeRedisStreamProvisioningFailed, CodeCoordinatorStateMutexUnavailable, CodeCoordinatorTerminating:
		return true
	}
	return false
}

// APIError is a non-2xx answer from the coordinator (or from something in
// front of it). ErrorCode is empty for Spring framework errors, interceptor
// 401/403s and non-JSON bodies.
type APIError struct {
	HTTPStatus int
	Status     string // coordinator HttpStatus name ("CONFLICT"), Spring "error", or the HTTP status text
	ErrorCode  string
	Message    string
	RequestID  string
	Method     string
	Path       string
	RetryAfter time.Duration // from the Retry-After header, 0 if absent
	Attempts   int

	traits callTraits // the request behind the answer; zero for hand-built errors
}

// Error renders e.g.
// "POST /coord/v1/streams/orders/scale: 409 CONFLICT ACTIVE_MIGRATION_EXISTS: <message> (request id terraform-...)".
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d", e.Method, e.Path, e.HTTPStatus)
	if e.Status != "" {
		b.WriteString(" " + e.Status)
	}
	if e.ErrorCode != "" {
		b.WriteString(" " + e.ErrorCode)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	var meta []string
	if e.RequestID != "" {
		meta = append(meta, "request id "+e.RequestID)
	}
	if e.Attempts > 1 {
		meta = append(meta, strconv.Itoa(e.Attempts)+" attempts")
	}
	if len(meta) > 0 {
		b.WriteString(" (" + strings.Join(meta, ", ") + ")")
	}
	return b.String()
}

// AsAPIError finds an *APIError in err's chain.
func AsAPIError(err error) (*APIError, bool) {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr, true
	}
	return nil, false
}

// ErrorCode returns the coordinator errorCode in err's chain, or "".
func ErrorCode(err error) string {
	if apiErr, ok := AsAPIError(err); ok {
		return apiErr.ErrorCode
	}
	return ""
}

func hasStatus(err error, status int) bool {
	apiErr, ok := AsAPIError(err)
	return ok && apiErr.HTTPStatus == status
}

// IsNotFound reports a coordinator 404 (GROUP_NOT_FOUND, STREAM_NOT_FOUND,
// MIGRATION_NOT_FOUND). A 404 without an errorCode is NOT reported: it means
// an unknown route (wrong endpoint or base path), and treating that as "the
// group is gone" would make Terraform drop or recreate live resources.
func IsNotFound(err error) bool {
	apiErr, ok := AsAPIError(err)
	return ok && apiErr.HTTPStatus == http.StatusNotFound && apiErr.ErrorCode != ""
}

// IsConflict reports a 409; with codes, only a 409 carrying one of them.
func IsConflict(err error, codes ...string) bool {
	apiErr, ok := AsAPIError(err)
	if !ok || apiErr.HTTPStatus != http.StatusConflict {
		return false
	}
	if len(codes) == 0 {
		return true
	}
	for _, code := range codes {
		if apiErr.ErrorCode == code {
			return true
		}
	}
	return false
}

// IsForbidden reports a 403 (authenticated, but the role is missing).
func IsForbidden(err error) bool { return hasStatus(err, http.StatusForbidden) }

// IsUnauthorized reports a 401 (credentials or token rejected).
func IsUnauthorized(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsRateLimited reports a 429.
func IsRateLimited(err error) bool { return hasStatus(err, http.StatusTooManyRequests) }

// AmbiguousKind says why a mutation's outcome is unknown.
type AmbiguousKind int

const (
	// AmbiguousNoAnswer: the request may have been written, and no answer
	// came (timeout, reset, EOF, a cancel after the request was written).
	AmbiguousNoAnswer AmbiguousKind = iota
	// AmbiguousNotCoordinatorAnswer: a 5xx without the coordinator's error
	// body: Spring's generic 500 (a store or state-mutex failure) or a
	// proxy's 502/503/504, which may have forwarded the request first. Err
	// is then the *APIError.
	AmbiguousNotCoordinatorAnswer
	// AmbiguousUnreadableAnswer: a 2xx whose body could not be read or
	// decoded: the coordinator most likely applied the change.
	AmbiguousUnreadableAnswer
)

// AmbiguousError means a mutation may or may not have been applied: the
// answer that came back was not the coordinator's own decision (see
// AmbiguousKind). It is never re-sent automatically: the caller must read
// the resource to find out whether it was applied, and re-send with the same
// RequestID if not. IsAmbiguous is the predicate for it.
type AmbiguousError struct {
	Kind      AmbiguousKind
	Method    string
	Path      string
	RequestID string
	Attempts  int
	Status    int // the HTTP status of an unreadable or non-coordinator answer; 0 without an answer
	Err       error
}

func (e *AmbiguousError) Error() string {
	switch e.Kind {
	case AmbiguousNotCoordinatorAnswer:
		who := "a proxy or load balancer in front of the coordinator (it may have forwarded the request first)"
		if apiErr, ok := e.Err.(*APIError); ok && apiErr.HTTPStatus == http.StatusInternalServerError && !strings.HasPrefix(apiErr.Message, nonJSONPrefix) {
			who = "the coordinator's generic error (a Redis store or state-mutex failure)"
		}
		return fmt.Sprintf("%s %s: the answer was %d without the coordinator's errorCode, from %s, "+
			"so the change may or may not have been committed; read the current state before re-sending it (request id %s): %v",
			e.Method, e.Path, e.Status, who, e.RequestID, e.Err)
	case AmbiguousUnreadableAnswer:
		return fmt.Sprintf("%s %s: the coordinator answered %d, but the answer could not be read, so the change may have been applied; "+
			"read the current state before re-sending it (request id %s): %v", e.Method, e.Path, e.Status, e.RequestID, e.Err)
	}
	return fmt.Sprintf("%s %s: no response received, so the request may have been applied by the coordinator; "+
		"read the current state before re-sending it (request id %s): %v", e.Method, e.Path, e.RequestID, e.Err)
}

func (e *AmbiguousError) Unwrap() error { return e.Err }

// IsAmbiguous reports whether err is an AmbiguousError: a mutation whose
// outcome is unknown.
func IsAmbiguous(err error) bool {
	var amb *AmbiguousError
	return errors.As(err, &amb)
}

// ErrRetryAfterBeyondDeadline is matched (errors.Is) by every DeadlineError.
var ErrRetryAfterBeyondDeadline = errors.New("retry wait is past the operation deadline")

// DeadlineError means the next retry would start after the context deadline,
// or the server's Retry-After is longer than the client waits at all
// (Ceiling), so the call failed at once instead of sleeping. It wraps the
// last failure, so ErrorCode and AsAPIError still see it.
type DeadlineError struct {
	Wait           time.Duration // the wait the next retry needed
	Remaining      time.Duration // time left until the deadline
	FromRetryAfter bool          // Wait came from the coordinator's Retry-After
	RetryAfter     string        // with Ceiling: the Retry-After header as the server sent it, redacted
	Ceiling        time.Duration // nonzero: Wait is longer than any wait the client honours
	Last           error
}

func (e *DeadlineError) Error() string { return e.Reason() + ": " + e.Last.Error() }

// Reason says why the retry was abandoned, without the last failure.
func (e *DeadlineError) Reason() string {
	if e.Ceiling > 0 {
		return fmt.Sprintf("the server asked to retry after Retry-After: %q, longer than the longest wait the provider honours "+
			"(%s: retry_wait_max, or the coordinator's %s rate-limit window if longer), so it did not wait",
			e.RetryAfter, formatSeconds(e.Ceiling), formatSeconds(rateLimitWindow))
	}
	who := "the next retry would wait"
	if e.FromRetryAfter {
		who = "coordinator asked to retry after"
	}
	return fmt.Sprintf("%s %s, which is past the operation deadline (%s left)", who, formatSeconds(e.Wait), formatSeconds(e.Remaining))
}

func (e *DeadlineError) Unwrap() error { return e.Last }

// Is makes errors.Is(err, ErrRetryAfterBeyondDeadline) true.
func (e *DeadlineError) Is(target error) bool { return target == ErrRetryAfterBeyondDeadline }

// formatSeconds renders d as seconds with at most one decimal ("120s", "0.5s").
func formatSeconds(d time.Duration) string {
	secs := math.Round(d.Seconds()*10) / 10
	return strconv.FormatFloat(secs, 'f', -1, 64) + "s"
}

// transportError is a network failure that is not ambiguous: retries were
// exhausted, the error was permanent (TLS), or the request was idempotent.
type transportError struct {
	method, path, requestID string
	attempts                int
	err                     error
}

func (e *transportError) Error() string {
	return fmt.Sprintf("%s %s: %v (request id %s, %d attempt(s))", e.method, e.path, e.err, e.requestID, e.attempts)
}

func (e *transportError) Unwrap() error { return e.err }

// InterruptedWaitError is a call stopped by its context (an interrupt, or
// the operation's deadline) while it waited to retry; it wraps both the
// context error and the failure that caused the retry.
type InterruptedWaitError struct {
	Method, Path, RequestID string
	Attempts                int
	Err                     error // context.Canceled on an interrupt
	Last                    error
}

func (e *InterruptedWaitError) Error() string {
	return fmt.Sprintf("%s %s: %s; last answer: %v", e.Method, e.Path, e.Reason(), e.Last)
}

// Reason says what stopped the wait, without the last failure.
func (e *InterruptedWaitError) Reason() string {
	how := "interrupted"
	if errors.Is(e.Err, context.DeadlineExceeded) {
		how = "cut short by the operation's deadline"
	}
	return fmt.Sprintf("the wait to retry was %s after %d attempt(s), and nothing more was sent (request id %s)", how, e.Attempts, e.RequestID)
}

func (e *InterruptedWaitError) Unwrap() []error { return []error{e.Err, e.Last} }

// IsTransient reports whether a failure may clear up by itself: the
// retryable coordinator codes of the retry table, a proxy's 502/503/504 to a
// GET, and network errors. It is false for ambiguous errors, deadline errors,
// context cancellation and TLS verification failures.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	var deadlineErr *DeadlineError
	var ambiguous *AmbiguousError
	if errors.As(err, &deadlineErr) || errors.As(err, &ambiguous) || errors.Is(err, context.Canceled) {
		return false
	}
	if apiErr, ok := AsAPIError(err); ok {
		tr := apiErr.traits
		if tr.method == "" {
			tr = traitsOf(apiErr.Method)
		}
		rc := classifyCall(tr, apiErr.HTTPStatus, apiErr.ErrorCode)
		return rc == classTransient || rc == classRateLimited
	}
	return isNetworkError(err)
}
