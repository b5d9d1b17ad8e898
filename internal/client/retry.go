package client

import (
	"crypto/tls"
	"crypto/x509"
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
)

func (rc retryClass) String() string {
	switch rc {
	case classTransient:
		return "transient"
	case classRateLimited:
		return "rate limited"
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
var retryTable = map[retryKey]retryClass{
	{http.StatusTooManyRequests, ""}:                                      classRateLimited,
	{http.StatusConflict, CodeStateVersionConflict}:                       classTransient,
	{http.StatusConflict, CodeMetadataSyncInProgress}:                     classTransient,
	{http.StatusServiceUnavailable, CodeCoordinatorStateMutexUnavailable}: classTransient,
	{http.StatusServiceUnavailable, CodeCoordinatorTerminating}:           classTransient,
	// Provisioning failures roll a create back and leave a scale PREPARING,
	// which a re-send with the same target resumes; both are safe to repeat.
	{http.StatusServiceUnavailable, CodeRedisStreamProvisioningFailed}: classTransient,
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

// classifyCall refines classify for one request. A 502, 503 or 504 without
// a coordinator errorCode comes from a proxy or load balancer in front of the
// coordinator, typically while it restarts. A GET changes nothing, so it is
// retried like the network error behind it; a mutation is not, because the
// proxy may have forwarded it before failing.
func classifyCall(method string, status int, code string) retryClass {
	rc := classify(status, code)
	if rc == classPermanent && method == http.MethodGet && code == "" &&
		(status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout) {
		return classTransient
	}
	return rc
}

// resendPolicy says whether a network failure after the request may have
// been written can be re-sent.
type resendPolicy int

const (
	// resendSafe: re-sending cannot apply the operation twice (GET, DELETE,
	// rollback, login, scale).
	resendSafe resendPolicy = iota
	// resendNever: a second copy would be a second operation (create). A
	// failure after a possible write becomes an AmbiguousError.
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
// verification and unknown host names.
func isPermanentNetworkError(err error) bool {
	var verifyErr *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &verifyErr), errors.As(err, &unknownAuthority),
		errors.As(err, &hostnameErr), errors.As(err, &invalidCert):
		return true
	case errors.As(err, &dnsErr):
		return dnsErr.IsNotFound
	}
	return false
}

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
