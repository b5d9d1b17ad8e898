package client

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// errorBody covers both error shapes: the coordinator's
// {status: "CONFLICT", errorCode, message} and Spring Boot's generic
// {timestamp, status: 409, error, message?, path}.
type errorBody struct {
	Status    json.RawMessage `json:"status"`
	ErrorCode string          `json:"errorCode"`
	Message   string          `json:"message"`
	Error     string          `json:"error"`
}

// maxExcerpt bounds how much of a non-JSON body ends up in an error message.
const maxExcerpt = 200

// responseInfo is what decodeError needs to know about the failed call.
type responseInfo struct {
	method, path, requestID string
	status                  int
	header                  http.Header
	body                    []byte
	attempts                int
	role                    string // role a 403 lacks: READ, WRITE or MEMBER
	authMode                string // how a 401 is explained
	now                     time.Time
	traits                  callTraits // the request, for IsTransient; zero = derived from method
	redact                  redactor   // everything quoted from the answer passes through it
}

// nonJSONPrefix starts the message of an answer that is not JSON (a proxy's
// HTML page, plain text).
const nonJSONPrefix = "unexpected non-JSON response: "

// decodeError turns any non-2xx response into an APIError, whatever the
// body: coordinator JSON, Spring's generic JSON, empty (interceptor 401/403),
// HTML from a proxy, or truncated JSON.
func decodeError(r responseInfo) *APIError {
	e := &APIError{
		HTTPStatus: r.status,
		RequestID:  r.requestID,
		Method:     r.method,
		Path:       r.path,
		Attempts:   r.attempts,
		traits:     r.traits,
	}
	if d, ok := parseRetryAfter(r.header.Get("Retry-After"), r.now); ok {
		e.RetryAfter = d
	}
	trimmed := bytes.TrimSpace(r.body)
	var body errorBody
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Unmarshal(trimmed, &body) == nil {
		// A documented code or status name is kept as sent: a secret that
		// happens to be part of one ("STATE") must not change what the
		// retry logic decides on; anything else may quote the request.
		e.ErrorCode = strings.TrimSpace(body.ErrorCode)
		if !knownCode(e.ErrorCode) {
			e.ErrorCode = r.redact.text(e.ErrorCode)
		}
		e.Message = r.redact.text(strings.TrimSpace(body.Message))
		var statusName string
		if json.Unmarshal(body.Status, &statusName) == nil {
			e.Status = statusName // coordinator: HttpStatus enum name
			if statusName != httpStatusName(r.status) {
				e.Status = r.redact.text(statusName)
			}
		} else if body.Error != "" {
			e.Status = r.redact.text(body.Error) // Spring: reason phrase in "error"
		}
	} else if len(trimmed) > 0 {
		e.Message = nonJSONPrefix + r.redact.excerpt(trimmed)
	}
	if e.Status == "" {
		e.Status = http.StatusText(r.status)
	}
	switch r.status {
	case http.StatusUnauthorized:
		e.Message = joinMessage(unauthorizedMessage(r.authMode), e.Message)
	case http.StatusForbidden:
		e.Message = joinMessage("the principal lacks the "+r.role+" role required for this call", e.Message)
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		e.Message = joinMessage("unexpected redirect to "+strconv.Quote(r.redact.text(r.header.Get("Location")))+
			"; check the endpoint URL", e.Message)
	}
	return e
}

func unauthorizedMessage(authMode string) string {
	switch authMode {
	case authModeBasic:
		return "the coordinator rejected the username/password (HTTP Basic)"
	case authModeToken:
		return "the coordinator rejected the bearer token (invalid, tampered or expired)"
	case authModeLogin:
		return "the coordinator rejected the login-issued bearer token, even after logging in again"
	case authModeLoginCall:
		return "login failed: the coordinator rejected the username or password"
	default:
		return "the coordinator requires credentials, but none are configured"
	}
}

func joinMessage(ours, server string) string {
	if server == "" {
		return ours
	}
	return ours + " (" + server + ")"
}

// httpStatusName is Spring's HttpStatus enum name of status
// ("SERVICE_UNAVAILABLE").
func httpStatusName(status int) string {
	return strings.ToUpper(strings.ReplaceAll(strings.ReplaceAll(http.StatusText(status), " ", "_"), "-", "_"))
}
