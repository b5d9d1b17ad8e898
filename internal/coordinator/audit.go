package coordinator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/blank"
)

// Audit outcomes (CONTRACT §10).
const (
	OutcomeSuccess      = "SUCCESS"
	OutcomeFailed       = "FAILED"
	OutcomeForbidden    = "FORBIDDEN"
	OutcomeUnauthorized = "UNAUTHORIZED"
	OutcomeError        = "ERROR"

	// anonymousPrincipal is recorded when authentication failed.
	anonymousPrincipal = "anonymous"
	// maxAuditedBodyBytes bounds which bodies get a SHA-256.
	maxAuditedBodyBytes = 64 << 10
)

// AuditEvent is one audit record, written for every audited request
// whatever its outcome.
type AuditEvent struct {
	Timestamp     time.Time `json:"timestamp"`
	CoordinatorID string    `json:"coordinatorId"`
	Action        string    `json:"action"`
	Outcome       string    `json:"outcome"`
	Status        int       `json:"status"`
	Principal     string    `json:"principal"`
	Method        string    `json:"method"`
	Path          string    `json:"path"`  // raw, percent-encoded
	Route         string    `json:"route"` // pattern
	QueryString   string    `json:"queryString"`
	StreamPrefix  string    `json:"streamPrefix"`  // raw form
	ConsumerGroup *string   `json:"consumerGroup"` // nil for stream-level actions
	ReshardingID  *string   `json:"reshardingId"`  // rollback only
	RequestID     string    `json:"requestId"`
	// RequestedBy, Reason and RequestBodySha256 are nil when the body was
	// never read (401/403/429, or a body the JSON converter refused).
	RequestedBy       *string           `json:"requestedBy"`
	Reason            *string           `json:"reason"`
	ClientAddress     string            `json:"clientAddress"`
	UserAgent         string            `json:"userAgent"`
	Roles             []string          `json:"roles"`
	DurationMs        int64             `json:"durationMs"`
	RequestBodySha256 *string           `json:"requestBodySha256"`
	RequestSummary    map[string]string `json:"requestSummary"`
}

type auditLog struct {
	mu     sync.Mutex
	events []AuditEvent
	sink   io.Writer
}

// AuditEvents returns a copy of the events in order.
func (c *Coordinator) AuditEvents() []AuditEvent {
	c.audit.mu.Lock()
	defer c.audit.mu.Unlock()
	out := make([]AuditEvent, len(c.audit.events))
	for i, e := range c.audit.events {
		e.Roles = append([]string{}, e.Roles...)
		summary := make(map[string]string, len(e.RequestSummary))
		for k, v := range e.RequestSummary {
			summary[k] = v
		}
		e.RequestSummary = summary
		out[i] = e
	}
	return out
}

func (c *Coordinator) recordAudit(x *exchange, action string) {
	now := c.now()
	status := x.w.code()
	ev := AuditEvent{
		Timestamp:      now,
		CoordinatorID:  c.opts.CoordinatorID,
		Action:         action,
		Outcome:        outcomeOf(status),
		Status:         status,
		Principal:      anonymousPrincipal,
		Method:         x.r.Method,
		Path:           x.rawPath,
		Route:          x.m.route.pattern,
		QueryString:    x.rawQuery,
		StreamPrefix:   x.m.raw["streamPrefix"],
		RequestID:      requestID(x.r.Header),
		ClientAddress:  clientAddress(x.r),
		UserAgent:      x.r.UserAgent(),
		Roles:          []string{},
		DurationMs:     now.Sub(x.start).Milliseconds(),
		RequestSummary: map[string]string{},
	}
	if g, ok := x.m.raw["consumerGroup"]; ok {
		ev.ConsumerGroup = &g
	}
	if id, ok := x.m.raw["reshardingId"]; ok {
		ev.ReshardingID = &id
	}
	if x.principal != nil {
		ev.Principal, ev.Roles = x.principal.name, x.principal.roleNames()
	}
	fillFromBody(&ev, x.body)
	c.audit.mu.Lock()
	defer c.audit.mu.Unlock()
	c.audit.events = append(c.audit.events, ev)
	if c.audit.sink != nil {
		line, _ := json.Marshal(ev) // AuditEvent always marshals
		_, _ = c.audit.sink.Write(append(line, '\n'))
	}
}

func outcomeOf(status int) string {
	switch {
	case status < 400:
		return OutcomeSuccess
	case status == http.StatusUnauthorized:
		return OutcomeUnauthorized
	case status == http.StatusForbidden:
		return OutcomeForbidden
	case status == http.StatusInternalServerError:
		return OutcomeError // an exception escaped the handlers
	}
	return OutcomeFailed
}

func requestID(h http.Header) string {
	for _, name := range []string{"X-Request-Id", "X-Correlation-Id", "X-Amzn-Trace-Id"} {
		if v := strings.TrimSpace(h.Get(name)); v != "" {
			return v
		}
	}
	return ""
}

func clientAddress(r *http.Request) string {
	if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
		first, _, _ := strings.Cut(xff, ",")
		if first = strings.TrimSpace(first); first != "" {
			return first
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// fillFromBody reads the audit fields from the cached raw body, as the
// server's audit filter does: requestedBy/reason (blank → nil), the hash for
// bodies up to 64 KiB, and the summary keys present in the JSON.
func fillFromBody(ev *AuditEvent, body []byte) {
	if len(body) == 0 {
		return
	}
	if len(body) <= maxAuditedBodyBytes {
		sum := sha256.Sum256(body)
		h := hex.EncodeToString(sum[:])
		ev.RequestBodySha256 = &h
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if dec.Decode(&obj) != nil {
		return
	}
	for name, dst := range map[string]**string{"requestedBy": &ev.RequestedBy, "reason": &ev.Reason} {
		if s, ok := obj[name].(string); ok && !blank.Body(s) {
			*dst = &s
		}
	}
	for _, name := range []string{"initialShardCount", "targetShardCount", "force"} {
		if v, ok := obj[name]; ok && v != nil {
			if s, ok := scalarText(v); ok {
				ev.RequestSummary[name] = s
			}
		}
	}
}
