package client

import (
	"context"
	"net/http"
	"testing"
)

// TestSecretInsideAnErrorCodeDoesNotChangeTheDecision: a password that is a
// word of a documented code ("STATE") does not turn STATE_VERSION_CONFLICT
// into something the retry logic does not know: the conflict is still
// retried, and still recognised as the conflict once retries run out.
func TestSecretInsideAnErrorCodeDoesNotChangeTheDecision(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeCoordError(w, http.StatusConflict, CodeStateVersionConflict, "state version moved")
	})
	c := newTestClient(t, f.URL, func(cfg *Config) { cfg.Password = "STATE" })
	_, err := c.ScaleGroup(context.Background(), "orders", "billing", 8, Mutation{})
	if !IsConflict(err, CodeStateVersionConflict) {
		t.Fatalf("err = %v, want the STATE_VERSION_CONFLICT kept as sent", err)
	}
	if got, want := f.count(), 1+3; got != want {
		t.Fatalf("requests = %d, want %d: the conflict is retried max_retries times", got, want)
	}
}
