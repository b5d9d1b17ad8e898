package coordinator

import (
	"testing"
	"time"
)

func want429(t *testing.T, r reply, retryAfter string) {
	t.Helper()
	if r.status != 429 {
		t.Fatalf("status = %d, want 429; %s", r.status, r.body)
	}
	const body = `{"status":"TOO_MANY_REQUESTS","errorCode":"RATE_LIMIT_EXCEEDED","message":"Coordinator API rate limit exceeded"}` + "\n"
	if string(r.body) != body {
		t.Fatalf("429 body = %q", r.body)
	}
	if got := r.header.Get("Retry-After"); got != retryAfter {
		t.Fatalf("Retry-After = %q, want %q", got, retryAfter)
	}
}

// TestRateLimitWindow: a fixed window from the key's first request;
// Retry-After is the rounded-up time to its end, at least 1; failed
// requests (409) count.
func TestRateLimitWindow(t *testing.T) {
	e := newEnv(t, Options{RateLimitEnabled: true, RateLimitPerWindow: 2, RateLimitWindow: 10 * time.Second})
	path := groupPath("orders", "g")
	e.mustStatus(e.do("POST", path, createBody(1)), 201)
	e.clock.Advance(2500 * time.Millisecond)
	e.do("POST", path, createBody(1)).wantAPIError(t, 409, "CONFLICT", CodeGroupAlreadyExists) // counts
	want429(t, e.do("POST", path, createBody(1)), "8")
	e.clock.Advance(7400 * time.Millisecond)
	want429(t, e.do("DELETE", path, auditBody()), "1") // 0.1s left → 1
	e.clock.Advance(100 * time.Millisecond)            // window over: a new one starts
	e.mustStatus(e.do("DELETE", path, auditBody()), 200)
}

// TestRateLimitScope: GETs, heartbeats and login are not limited; 401/403
// are not counted; each {principal, p, g} has its own bucket; stream create
// and stream scale share the "*" bucket of the prefix.
func TestRateLimitScope(t *testing.T) {
	users := []User{
		{Username: "w1", Password: "p", Roles: []Role{RoleWrite}},
		{Username: "w2", Password: "p", Roles: []Role{RoleWrite}},
		{Username: "r", Password: "p", Roles: []Role{RoleRead}},
	}
	e := newEnv(t, Options{Users: users, RateLimitEnabled: true, RateLimitPerWindow: 1})
	w1, w2 := basic("w1", "p"), basic("w2", "p")
	for range 3 {
		if r := e.do("POST", "/coord/v1/streams/orders", createBody(2), basic("w1", "wrong")); r.status != 401 {
			t.Fatalf("401 = %d", r.status)
		}
		if r := e.do("POST", "/coord/v1/streams/orders", createBody(2), basic("r", "p")); r.status != 403 {
			t.Fatalf("403 = %d", r.status)
		}
	}
	// Rejected by auth before the limiter: no bucket for anyone was opened
	// (r's 403s would otherwise open r's own bucket, which nothing below uses).
	e.c.limiter.mu.Lock()
	opened := len(e.c.limiter.windows)
	e.c.limiter.mu.Unlock()
	if opened != 0 {
		t.Fatalf("401/403 responses opened %d rate-limit windows; auth must run before the limiter", opened)
	}
	e.mustStatus(e.do("POST", "/coord/v1/streams/orders", createBody(2), w1), 201)
	want429(t, e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(3), w1), "60")
	e.mustStatus(e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(3), w2), 202)
	// Group-scoped bucket differs from the stream "*" bucket.
	e.mustStatus(e.do("POST", groupPath("orders", "other"), createBody(1), w1), 201)
	want429(t, e.do("POST", groupPath("orders", "other")+"/scale", scaleBody(2), w1), "60")
	for range 3 {
		e.mustStatus(e.do("GET", groupPath("orders", "orders"), nil, w1), 200)
		e.mustStatus(e.do("POST", RouteLogin, nil, w1), 200)
		e.member("orders", "orders", "m").beat()
	}
}

// TestRateLimitRawKey: the key uses the raw encoded segments.
func TestRateLimitRawKey(t *testing.T) {
	e := newEnv(t, Options{RateLimitEnabled: true, RateLimitPerWindow: 1})
	e.mustStatus(e.do("POST", groupPath("a%3Ab", "g"), createBody(1)), 201)
	// "a:b" spelled literally is a different raw key, same decoded group.
	e.do("POST", groupPath("a:b", "g"), createBody(1)).wantAPIError(t, 409, "CONFLICT", CodeGroupAlreadyExists)
	want429(t, e.do("POST", groupPath("a%3Ab", "g"), createBody(1)), "60")
}

func TestRateLimitNonPositiveRejectsAll(t *testing.T) {
	e := newEnv(t, Options{RateLimitEnabled: true, RateLimitPerWindow: -1})
	want429(t, e.do("POST", "/coord/v1/streams/orders", createBody(1)), "60")
	e.do("GET", groupPath("orders", "orders"), nil).wantAPIError(t, 404, "NOT_FOUND", CodeGroupNotFound)
}

func TestRateLimitDisabledByDefault(t *testing.T) {
	e := newEnv(t, Options{RateLimitPerWindow: 1})
	e.createGroup("orders", "g", 1)
	for range 3 {
		e.do("POST", groupPath("orders", "g"), createBody(1)).wantAPIError(t, 409, "CONFLICT", CodeGroupAlreadyExists)
	}
}
