package client

import (
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// retryClass says what the transport does with a coordinator answer.
type retryClass int

const (
	// classPermanent is returned to the caller at once.
	classPermanent retryClass = iota
	// classTransient is retried with backoff (or Retry-After when sent).
	classTransient
	// classRateLimited is retried after the server's Retry-After.
	classRateLimited
	// classAmbiguous is not retried and is returned as an AmbiguousError:
	// the mutation may or may not have been committed, and repeating it is
	// not known to be harmless, so the caller must read back first.
	classAmbiguous
)

func (rc retryClass) String() string {
	switch rc {
	case classTransient:
		return "transient"
	case classRateLimited:
		return "rate limited"
	case classAmbiguous:
		return "ambiguous"
	default:
		return "permanent"
	}
}

type retryKey struct {
	status int
	code   string // "" matches any errorCode for that status
}

// retryTable is CONTRACT §3/§9 "retry class" column. Anything not listed is
// permanent, including 409 ACTIVE_MIGRATION_EXISTS: that one needs the caller
// to wait for the migration and re-evaluate, not a blind re-send.
// classifyCall refines it per request:
//
//   - 503 REDIS_STREAM_PROVISIONING_FAILED is transient for a scale (the
//     migration stays PREPARING and a re-send with the same target resumes
//     it) but permanent for a create (§4.2): the failed create leaves the
//     keys p:0..k-1, so for the first group of a prefix a re-send gets 409
//     STREAM_PREFIX_ALREADY_EXISTS and hides the real failure.
//   - 500 without an errorCode is Spring's generic error: a Redis store or
//     state-mutex failure (§9). It is transient for calls the contract makes
//     safe to repeat (GETs, login, rollback, which is idempotent, and delete,
//     whose repeat answers 404 = already gone). On any other mutation (create,
//     scale, heartbeat) the change may or may not have been committed, so it
//     is classAmbiguous: never re-sent, returned as an AmbiguousError for the
//     caller to read back. (A scale IS re-sent after a connection reset,
//     because its 202 was lost only after the coordinator answered; a 500 may
//     come from a half-done stream scale, which a blind re-send would hide.)
//   - 502, 503 and 504 without an errorCode come from a proxy; they are
//     retried on GETs only.
var retryTable = map[retryKey]retryClass{
	{http.StatusTooManyRequests, ""}:                                      classRateLimited,
	{http.StatusConflict, CodeStateVersionConflict}:                       classTransient,
	{http.StatusConflict, CodeMetadataSyncInProgress}:                     classTransient,
	{http.StatusServiceUnavailable, CodeCoordinatorStateMutexUnavailable}: classTransient,
	{http.StatusServiceUnavailable, CodeCoordinatorTerminating}:           classTransient,
	{http.StatusServiceUnavailable, CodeRedisStreamProvisioningFailed}:    classTransient, // scale only, see above
}

func classify(status int, code string) retryClass {
	if rc, ok := retryTable[retryKey{status, code}]; ok {
		return rc
	}
	if rc, ok := retryTable[retryKey{status, ""}]; ok {
		return rc
	}
	return classPermanent
}

// callTraits is what the retry rules need to know about the request behind
// an answer.
type callTraits struct {
	method string
	create bool         // create stream or create group
	resend resendPolicy // what repeating the request may do
}

// traitsOf describes a request known only by its method (hand-built errors).
func traitsOf(method string) callTraits {
	if method == http.MethodGet || method == http.MethodHead {
		return callTraits{method: method, resend: resendIdempotent}
	}
	return callTraits{method: method, resend: resendAfterNetworkError}
}

// classifyCall refines classify for one request (see retryTable).
func classifyCall(tr callTraits, status int, code string) retryClass {
	rc := classify(status, code)
	switch {
	case tr.create && status == http.StatusServiceUnavailable && code == CodeRedisStreamProvisioningFailed:
		return classPermanent
	case rc != classPermanent || code != "":
		return rc
	case status == http.StatusInternalServerError:
		if tr.resend == resendIdempotent {
			return classTransient
		}
		return classAmbiguous
	case tr.method == http.MethodGet &&
		(status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout):
		// A proxy in front of a restarting coordinator; a GET changes
		// nothing. A mutation is not retried: the proxy may have forwarded it.
		return classTransient
	}
	return rc
}

// resendPolicy says whether a request may be sent again after a failure
// that may have happened after the coordinator received it.
type resendPolicy int

const (
	// resendIdempotent: the contract makes repeating it harmless (GET, login,
	// rollback, delete: a repeat of an applied delete answers 404, which the
	// caller treats as already gone). Re-sent after network errors and
	// generic 500s.
	resendIdempotent resendPolicy = iota
	// resendAfterNetworkError: re-sent after a network error (a scale whose
	// 202 was lost is applied, and its re-send's 409 ACTIVE_MIGRATION_EXISTS
	// leads the caller to read and adopt it) but not after a generic 500.
	resendAfterNetworkError
	// resendNever: a second copy would be a second operation (create,
	// heartbeat). A failure after a possible write becomes an AmbiguousError.
	resendNever
)

// maxRetryAfter caps absurd Retry-After values so the arithmetic cannot
// overflow; the deadline check rejects such waits anyway.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads a Retry-After value: delta-seconds or an HTTP-date
// (relative to now; a date in the past means "retry now").
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(maxRetryAfter/time.Second) {
			// Only overflow fails ParseInt on digits; treat it as the cap.
			return maxRetryAfter, true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now)
	switch {
	case d < 0:
		return 0, true
	case d > maxRetryAfter:
		return maxRetryAfter, true
	}
	return d, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// backoff is jittered exponential: attempt 1 waits about min, each later
// attempt doubles, capped at max; the jitter keeps the wait in [base/2, base]
// but never below min, so parallel resources do not retry in lockstep.
func backoff(minWait, maxWait time.Duration, attempt int) time.Duration {
	base := float64(minWait) * math.Pow(2, float64(attempt-1))
	if base > float64(maxWait) || math.IsInf(base, 0) {
		base = float64(maxWait)
	}
	half := base / 2
	wait := time.Duration(half + rand.Float64()*half)
	if wait < minWait {
		wait = minWait
	}
	return wait
}

// isDialError reports a failure to connect at all: the request never reached
// the coordinator, so re-sending is safe for every method.
func isDialError(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if opErr, ok := e.(*net.OpError); ok && opErr.Op == "dial" {
			return true
		}
		if _, ok := e.(*net.DNSError); ok {
			return true
		}
	}
	return false
}

// isPermanentNetworkError reports failures a retry cannot fix: certificate
// verification, unknown host names, a TLS/plain-HTTP mismatch, a connect
// timeout.
func isPermanentNetworkError(err error) bool {
	_, retry, ok := connectionFailure(err)
	return ok && !retry
}

func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// isNetworkError reports connection-level failures (resets, refusals,
// timeouts, truncated responses) that may clear up on their own.
func isNetworkError(err error) bool {
	if isPermanentNetworkError(err) {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE)
}
