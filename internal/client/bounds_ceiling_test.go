package client

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// With max_retries = 0 a huge Retry-After is still quoted as the server's
// refusal to be retried in time, not reported as "still exceeded after
// retrying"; and the quoted value passes the call's redactor (a password of
// digits is a valid Retry-After).
func TestHugeRetryAfterWithoutRetriesIsQuotedAndRedacted(t *testing.T) {
	const pw = "86400000"
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Retry-After", pw)
		writeCoordError(w, http.StatusTooManyRequests, CodeRateLimitExceeded, "Coordinator API rate limit exceeded")
	})
	c := newTestClient(t, f.URL, func(cfg *Config) { cfg.MaxRetries, cfg.Password = 0, pw })
	c.retryAfterUnit = time.Second
	_, err := c.ScaleGroup(context.Background(), "orders", "billing", 8, Mutation{})
	var de *DeadlineError
	if !errors.As(err, &de) || de.Ceiling == 0 {
		t.Fatalf("want a DeadlineError quoting the ceiling, got %v", err)
	}
	if !strings.Contains(err.Error(), `Retry-After: "***"`) || strings.Contains(err.Error(), pw) {
		t.Errorf("the Retry-After is not quoted redacted: %v", err)
	}
	if got := f.count(); got != 1 {
		t.Errorf("requests = %d, want 1", got)
	}
}
