package coordinator

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error codes the server raises (CONTRACT §3).
const (
	CodeInvalidRequest            = "INVALID_REQUEST"
	CodeGroupNotFound             = "GROUP_NOT_FOUND"
	CodeStreamNotFound            = "STREAM_NOT_FOUND"
	CodeMigrationNotFound         = "MIGRATION_NOT_FOUND"
	CodeGroupAlreadyExists        = "GROUP_ALREADY_EXISTS"
	CodeStreamPrefixAlreadyExists = "STREAM_PREFIX_ALREADY_EXISTS"
	CodeGroupHasActiveMembers     = "GROUP_HAS_ACTIVE_MEMBERS"
	CodeActiveMigrationExists     = "ACTIVE_MIGRATION_EXISTS"
	CodeMetadataSyncInProgress    = "METADATA_SYNC_IN_PROGRESS"
	CodeStateVersionConflict      = "STATE_VERSION_CONFLICT"
	CodeRollbackNotAllowed        = "ROLLBACK_NOT_ALLOWED"
	CodeRateLimitExceeded         = "RATE_LIMIT_EXCEEDED"
	CodeRedisNotConfigured        = "REDIS_NOT_CONFIGURED"
	CodeRedisProvisioningFailed   = "REDIS_STREAM_PROVISIONING_FAILED"
	CodeStateMutexUnavailable     = "COORDINATOR_STATE_MUTEX_UNAVAILABLE"
	CodeCoordinatorTerminating    = "COORDINATOR_TERMINATING"
	rateLimitMessage              = "Coordinator API rate limit exceeded"
	wwwAuthenticate               = `Basic realm="redis-stream-coordinator"`
	jsonContentType               = "application/json"
)

// apiError is a coordinator error: {"status":"<HttpStatus NAME>",
// "errorCode":..., "message":...}.
type apiError struct {
	status  int
	code    string
	message string
}

func errorf(status int, code, message string) *apiError {
	return &apiError{status: status, code: code, message: message}
}

type errorBody struct {
	Status    string `json:"status"`
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
}

// httpStatusNames holds the Spring HttpStatus enum names that differ from a
// plain upper-casing of Go's status text, plus the common ones for speed.
var httpStatusNames = map[int]string{
	400: "BAD_REQUEST", 401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND",
	405: "METHOD_NOT_ALLOWED", 409: "CONFLICT", 413: "PAYLOAD_TOO_LARGE", 415: "UNSUPPORTED_MEDIA_TYPE",
	418: "I_AM_A_TEAPOT", 422: "UNPROCESSABLE_ENTITY", 429: "TOO_MANY_REQUESTS",
	500: "INTERNAL_SERVER_ERROR", 502: "BAD_GATEWAY", 503: "SERVICE_UNAVAILABLE", 504: "GATEWAY_TIMEOUT",
}

func httpStatusName(status int) string {
	if n, ok := httpStatusNames[status]; ok {
		return n
	}
	text := http.StatusText(status)
	if text == "" {
		return strconv.Itoa(status)
	}
	return strings.ToUpper(strings.NewReplacer(" ", "_", "-", "_", "'", "").Replace(text))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", jsonContentType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // a failed write means the client went away
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.status, errorBody{Status: httpStatusName(e.status), ErrorCode: e.code, Message: e.message})
}

// frameworkError is Spring Boot's default error JSON: integer status, no
// errorCode, no message (server.error.include-message=never).
type frameworkError struct {
	Timestamp string `json:"timestamp"`
	Status    int    `json:"status"`
	Error     string `json:"error"`
	Path      string `json:"path"`
}

func writeFrameworkError(w http.ResponseWriter, status int, rawPath string, now time.Time) {
	writeJSON(w, status, frameworkError{
		Timestamp: now.UTC().Format("2006-01-02T15:04:05.000-07:00"),
		Status:    status,
		Error:     http.StatusText(status),
		Path:      rawPath,
	})
}

// writeUnauthorized is the auth interceptor's 401: empty body plus the
// Basic challenge.
func writeUnauthorized(w http.ResponseWriter) {
	w.Header().Set("WWW-Authenticate", wwwAuthenticate)
	w.WriteHeader(http.StatusUnauthorized)
}

// writeForbidden is the auth interceptor's 403: empty body, no header.
func writeForbidden(w http.ResponseWriter) { w.WriteHeader(http.StatusForbidden) }

// writeTomcatBadRequest answers a URI that Tomcat rejects before Spring
// sees it (an encoded '/' or a broken escape): Tomcat's own HTML page.
func writeTomcatBadRequest(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html;charset=utf-8")
	w.Header().Set("Content-Language", "en")
	w.WriteHeader(http.StatusBadRequest)
	const title = "HTTP Status 400 – Bad Request"
	_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><title>` + title +
		`</title></head><body><h1>` + title + `</h1></body></html>`))
}

// instant serializes like java.time.Instant through Jackson with Spring
// Boot's defaults: ISO-8601 UTC with 0, 3, 6 or 9 fraction digits.
type instant time.Time

func (t instant) MarshalJSON() ([]byte, error) {
	return []byte(`"` + formatInstant(time.Time(t)) + `"`), nil
}

// UnmarshalJSON reads the same form back (used by tests decoding views).
func (t *instant) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	parsed, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	*t = instant(parsed)
	return nil
}

func formatInstant(t time.Time) string {
	t = t.UTC()
	s := t.Format("2006-01-02T15:04:05")
	ns := t.Nanosecond()
	switch {
	case ns == 0:
	case ns%1_000_000 == 0:
		s += "." + pad(ns/1_000_000, 3)
	case ns%1_000 == 0:
		s += "." + pad(ns/1_000, 6)
	default:
		s += "." + pad(ns, 9)
	}
	return s + "Z"
}

func pad(n, width int) string {
	s := strconv.Itoa(n)
	return strings.Repeat("0", width-len(s)) + s
}

func instantPtr(t *time.Time) *instant {
	if t == nil {
		return nil
	}
	v := instant(*t)
	return &v
}
