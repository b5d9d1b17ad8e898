package client

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestBlankFollowsTheServersRules: names are blank by Kotlin's isBlank()
// and body fields by Java's trim() (CONTRACT §3), not by Go's TrimSpace: a
// group named "\u0085" exists on the server and is sent, a member id
// "\u0085" is sent, and a name of "\u001c" is still refused locally.
func TestBlankFollowsTheServersRules(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if strings.Contains(r.URL.Path, "/heartbeat") {
			writeJSON(w, http.StatusOK, map[string]any{"status": "OK"})
			return
		}
		writeJSON(w, http.StatusOK, groupJSON("orders", "\u0085", 4))
	})
	c := newTestClient(t, f.URL, nil)
	ctx := context.Background()
	if _, err := c.GetGroup(ctx, "orders", "\u0085"); err != nil {
		t.Fatalf("group \"\\u0085\" is not blank for the server: %v", err)
	}
	if _, err := c.Heartbeat(ctx, "orders", "\u0085", HeartbeatRequest{MemberID: "\u0085"}); err != nil && strings.Contains(err.Error(), "must not be blank") {
		t.Fatalf("member id \"\\u0085\" is not blank for the server: %v", err)
	}
	if got := f.count(); got != 2 {
		t.Fatalf("requests = %d, want the read and the heartbeat sent", got)
	}
	if _, err := c.GetGroup(ctx, "orders", "\u001c"); err == nil || !strings.Contains(err.Error(), "must not be blank") {
		t.Fatalf("group \"\\u001c\" is blank for the server: %v", err)
	}
	if _, err := c.Heartbeat(ctx, "orders", "g", HeartbeatRequest{MemberID: "\u001c"}); err == nil || !strings.Contains(err.Error(), "must not be blank") {
		t.Fatalf("member id \"\\u001c\" is blank for the server: %v", err)
	}
	if got := f.count(); got != 2 {
		t.Fatalf("requests = %d, want nothing more sent for blank values", got)
	}
}
