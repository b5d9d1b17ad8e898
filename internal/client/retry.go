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
//   - A 5xx without an errorCode is not the coordinator's own decision:
//     Spring's generic 500 (a Redis store or state-mutex failure, §9) or a
//     proxy's 502/503/504 (often an HTML page), which may have forwarded the
//     request before failing. On a call that is safe to repeat (GETs, login)
//     the 500 and a proxy's 502/503/504 to a GET are transient. On any
//     mutation (create, scale, rollback, delete, heartbeat) the change may or
//     may not have been committed: classAmbiguous, never re-sent, returned as
//     an AmbiguousError for the caller to read back (issue 20).
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
	return callTraits{method: method, resend: resendNever}
}

// classifyCall refines classify for one request (see retryTable).
func classifyCall(tr callTraits, status int, code string) retryClass {
	rc := classify(status, code)
	switch {
	case tr.create && status == http.StatusServiceUnavailable && code == CodeRedisStreamProvisioningFailed:
		return classPermanent
	case rc != classPermanent || code != "" || status < 500:
		return rc
	case tr.resend != resendIdempotent:
		// Not the coordinator's decision, on a mutation: the outcome is unknown.
		return classAmbiguous
	case status == http.StatusInternalServerError:
		return classTransient
	case tr.method == http.MethodGet &&
		(status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout):
		// A proxy in front of a restarting coordinator; a GET changes nothing.
		return classTransient
	}
	return rc
}

// resendPolicy says whether a request may be sent again after a failure
// that may have happened after the coordinator received it.
type resendPolicy int

const (
	// resendIdempotent: repeating it changes nothing (GET, login). Re-sent
	// after network errors and generic 500s.
	resendIdempotent resendPolicy = iota
	// resendNever: every mutation (create, scale, rollback, delete,
	// heartbeat). A failure after the request may have been written, or an
	// answer that is not the coordinator's own decision, becomes an
	// AmbiguousError: the caller reads back before it decides, and re-sends
	// with the same request id only when the change did not happen. (Even
	// where a repeat would be harmless, as for rollback and delete, the
	// read-back keeps the audit log at one event per change.)
	resendNever
)

// maxRetryAfter caps absurd Retry-After values so the arithmetic cannot
// overflow; checkRetry refuses any wait beyond its ceiling anyway.
const maxRetryAfter = 24 * time.Hour

// rateLimitWindow is the coordinator's rate-limit window (CONTRACT §8): its
// own Retry-After is never longer, so a longer one (from a proxy, say) is
// refused at once unless retry_wait_max is longer still.
const rateLimitWindow = 60 * time.Second

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
