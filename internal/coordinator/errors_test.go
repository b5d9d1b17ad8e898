package coordinator

import (
	"net/http"
	"strings"
	"testing"
)

// TestFrameworkErrors: failures Spring handles before the controller use
// the generic JSON with an integer status and no errorCode.
func TestFrameworkErrors(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 2)
	scale := "/coord/v1/streams/orders/scale"
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		opts   []reqOption
		status int
	}{
		{"malformed JSON", "POST", scale, rawBody(`{"targetShardCount":`), nil, 400},
		{"body not an object", "POST", scale, rawBody(`[1,2]`), nil, 400},
		{"JSON null body", "POST", scale, rawBody(`null`), nil, 400},
		{"missing body on scale", "POST", scale, rawBody(""), nil, 400},
		{"missing targetShardCount", "POST", scale, map[string]any{"requestedBy": "a", "reason": "b"}, nil, 400},
		{"null targetShardCount", "POST", scale, map[string]any{"targetShardCount": nil, "requestedBy": "a", "reason": "b"}, nil, 400},
		{"string targetShardCount", "POST", scale, map[string]any{"targetShardCount": "many", "requestedBy": "a", "reason": "b"}, nil, 400},
		{"boolean targetShardCount", "POST", scale, map[string]any{"targetShardCount": true, "requestedBy": "a", "reason": "b"}, nil, 400},
		{"int overflow", "POST", scale, rawBody(`{"targetShardCount":3000000000,"requestedBy":"a","reason":"b"}`), nil, 400},
		{"object requestedBy", "POST", groupPath("orders", "x"), map[string]any{"requestedBy": map[string]any{}}, nil, 400},
		{"missing body on delete", "DELETE", groupPath("orders", "g"), nil, nil, 400},
		{"empty JSON body on delete", "DELETE", groupPath("orders", "g"), rawBody(""), nil, 400},
		{"text/plain delete counts as missing", "DELETE", groupPath("orders", "g"), rawBody(`{"requestedBy":"a","reason":"b"}`), []reqOption{header("Content-Type", "text/plain")}, 400},
		{"wrong force type", "DELETE", groupPath("orders", "g"), map[string]any{"requestedBy": "a", "reason": "b", "force": "yes"}, nil, 400},
		{"unknown route", "GET", "/coord/v1/nope", nil, nil, 404},
		{"trailing slash", "GET", groupPath("orders", "g") + "/", nil, nil, 404},
		{"wrong method", "PUT", groupPath("orders", "g"), rawBody(`{}`), nil, 405},
		{"GET on a POST route", "GET", scale, nil, nil, 405},
		{"text/plain on create", "POST", groupPath("orders", "y"), rawBody(`{"requestedBy":"a"}`), []reqOption{header("Content-Type", "text/plain")}, 415},
		{"body without content type", "POST", groupPath("orders", "y"), rawBody(`{"requestedBy":"a"}`), []reqOption{header("Content-Type", "")}, 415},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e.do(tc.method, tc.path, tc.body, tc.opts...).wantFramework(t, tc.status, tc.path)
		})
	}
	if g := e.group("orders", "g"); g.ShardCount != 2 {
		t.Fatalf("a rejected request changed the group: %+v", g)
	}
}

func TestMethodNotAllowedIsAnsweredBeforeAuth(t *testing.T) {
	e := newEnv(t, Options{})
	r := e.do("PATCH", groupPath("orders", "g"), rawBody(`{}`), noAuth())
	r.wantFramework(t, 405, groupPath("orders", "g"))
	if allow := r.header.Get("Allow"); allow != "DELETE,GET,HEAD,POST" {
		t.Fatalf("Allow = %q", allow)
	}
}

// TestUnknownRouteNeedsAuth: unknown paths under /coord/v1 reach the
// static-resource handler after the auth interceptor.
func TestUnknownRouteNeedsAuth(t *testing.T) {
	e := newEnv(t, Options{})
	if r := e.do("GET", "/coord/v1/nope", nil, noAuth()); r.status != 401 || len(r.body) != 0 {
		t.Fatalf("unauthenticated unknown route = %d %q", r.status, r.body)
	}
}

// TestBodyContentTypes: JSON variants bind; login's optional body may be
// absent without a content type.
func TestBodyContentTypes(t *testing.T) {
	e := newEnv(t, Options{})
	e.mustStatus(e.do("POST", groupPath("orders", "a"), createBody(1), header("Content-Type", "application/json; charset=UTF-8")), 201)
	e.mustStatus(e.do("POST", groupPath("orders", "b"), createBody(1), header("Content-Type", "application/merge-patch+json")), 201)
	e.mustStatus(e.do("POST", RouteLogin, nil), 200)
	// Unknown fields are ignored; trailing content after the object too.
	e.mustStatus(e.do("POST", groupPath("orders", "c"), rawBody(`{"requestedBy":"x","extra":{"a":[1]}} trailing`)), 201)
	// Jackson coercions: numeric strings and integral floats bind to Int.
	e.mustStatus(e.do("POST", groupPath("orders", "d"), map[string]any{"initialShardCount": "3", "requestedBy": 7}), 201)
	if g := e.group("orders", "d"); g.ShardCount != 3 {
		t.Fatalf("coerced initialShardCount = %d", g.ShardCount)
	}
}

func TestValidationMessages(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 2)
	tests := []struct {
		name, method, path string
		body               any
		message            string
	}{
		{"create", "POST", "/coord/v1/streams/s", map[string]any{"initialShardCount": 0, "requestedBy": " "},
			"initialShardCount: must be greater than or equal to 1; requestedBy: must not be blank"},
		{"create group missing requestedBy", "POST", groupPath("orders", "h"), map[string]any{},
			"requestedBy: must not be blank"},
		{"scale negative", "POST", "/coord/v1/streams/orders/scale", map[string]any{"targetShardCount": -1, "requestedBy": "a", "reason": "b"},
			"targetShardCount: must be greater than or equal to 0"},
		{"scale blank audit fields", "POST", groupPath("orders", "g") + "/scale", map[string]any{"targetShardCount": 1, "requestedBy": "", "reason": ""},
			"reason: must not be blank; requestedBy: must not be blank"},
		{"delete", "DELETE", groupPath("orders", "g"), map[string]any{"requestedBy": "a"},
			"reason: must not be blank"},
		{"rollback", "POST", groupPath("orders", "g") + "/migrations/x/rollback", map[string]any{"reason": "b"},
			"requestedBy: must not be blank"},
		{"brace prefix", "POST", "/coord/v1/streams/%7Bord%7D", createBody(1),
			"streamPrefix must not contain Redis Cluster hash tag braces"},
		{"brace prefix on group create", "POST", groupPath("a%7Bb", "g"), createBody(1),
			"streamPrefix must not contain Redis Cluster hash tag braces"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := e.do(tc.method, tc.path, tc.body).wantAPIError(t, 400, "BAD_REQUEST", CodeInvalidRequest)
			if m["message"] != tc.message {
				t.Fatalf("message = %q, want %q", m["message"], tc.message)
			}
		})
	}
	e.do("GET", groupPath("a%7Bb", "g"), nil).wantAPIError(t, 404, "NOT_FOUND", CodeGroupNotFound)
}

// TestNotFoundCodes covers every 404 errorCode the provider can meet.
func TestNotFoundCodes(t *testing.T) {
	e := newEnv(t, Options{})
	missing := groupPath("orders", "missing")
	for name, r := range map[string]reply{
		"get":            e.do("GET", missing, nil),
		"monitoring get": e.do("GET", "/coord/v1/monitoring/streams/orders/groups/missing", nil),
		"members":        e.do("GET", "/coord/v1/monitoring/streams/orders/groups/missing/members", nil),
		"assignments":    e.do("GET", "/coord/v1/monitoring/streams/orders/groups/missing/assignments", nil),
		"consumption":    e.do("GET", "/coord/v1/monitoring/streams/orders/groups/missing/consumption", nil),
		"migrations":     e.do("GET", "/coord/v1/monitoring/streams/orders/groups/missing/migrations", nil),
		"routing":        e.do("GET", missing+"/producer-routing", nil),
		"delete":         e.do("DELETE", missing, auditBody()),
		"scale group":    e.do("POST", missing+"/scale", scaleBody(3)),
		"get migration":  e.do("GET", missing+"/migrations/reshard-x", nil),
		"rollback":       e.do("POST", missing+"/migrations/reshard-x/rollback", auditBody()),
	} {
		t.Run(name, func(t *testing.T) { r.wantAPIError(t, 404, "NOT_FOUND", CodeGroupNotFound) })
	}
	e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(3)).wantAPIError(t, 404, "NOT_FOUND", CodeStreamNotFound)
	e.createGroup("orders", "g", 2)
	e.do("GET", groupPath("orders", "g")+"/migrations/reshard-nope", nil).wantAPIError(t, 404, "NOT_FOUND", CodeMigrationNotFound)
	e.do("POST", groupPath("orders", "g")+"/migrations/reshard-nope/rollback", auditBody()).wantAPIError(t, 404, "NOT_FOUND", CodeMigrationNotFound)
}

// TestEncodedNames covers §14: names are single decoded path segments, an
// encoded '/' is rejected by Tomcat, and ';' starts path parameters.
func TestEncodedNames(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("my%20stream", "g%3Ax", 2)
	g := e.group("my%20stream", "g%3Ax")
	if g.StreamPrefix != "my stream" || g.ConsumerGroup != "g:x" {
		t.Fatalf("decoded names = %q %q", g.StreamPrefix, g.ConsumerGroup)
	}
	r := e.do("GET", groupPath("a%2Fb", "g"), nil)
	if r.status != 400 || !strings.Contains(string(r.body), "400") || strings.Contains(string(r.body), "errorCode") {
		t.Fatalf("encoded slash = %d %s", r.status, r.body)
	}
	if e.group("my%20stream;v=1", "g%3Ax;jsessionid=1").ConsumerGroup != "g:x" {
		t.Fatal("path parameters after ';' must be dropped")
	}
	// An encoded ';' is part of the name.
	e.createGroup("orders", "a%3Bb", 1)
	if e.group("orders", "a%3Bb").ConsumerGroup != "a;b" {
		t.Fatal("%3B must decode to ';'")
	}
	e.do("GET", groupPath("orders", "a"), nil).wantAPIError(t, http.StatusNotFound, "NOT_FOUND", CodeGroupNotFound)
}
