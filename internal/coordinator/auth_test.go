package coordinator

import (
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func roleUsers() []User {
	return []User{
		{Username: "reader", Password: "r", Roles: []Role{RoleRead}},
		{Username: "writer", Password: "w", Roles: []Role{RoleWrite}},
		{Username: "root", Password: "a", Roles: []Role{RoleAdmin}},
		{Username: "monitor", Password: "m", Roles: []Role{RoleMonitor}},
		{Username: "member", Password: "b", Roles: []Role{RoleMember}},
	}
}

// TestRoleMatrix checks CONTRACT §2's grants for each role on a read, a
// mutation, monitoring and the heartbeat (open and authenticated).
func TestRoleMatrix(t *testing.T) {
	passwords := map[string]string{"reader": "r", "writer": "w", "root": "a", "monitor": "m", "member": "b"}
	tests := []struct {
		user                                 string
		get, mutate, monitor, openHB, authHB int
	}{
		{"reader", 200, 403, 200, 200, 403},
		{"writer", 200, 201, 200, 200, 403},
		{"root", 200, 201, 200, 200, 200},
		{"monitor", 200, 403, 200, 200, 403},
		{"member", 403, 403, 403, 200, 200},
	}
	for _, tc := range tests {
		t.Run(tc.user, func(t *testing.T) {
			for _, authMembers := range []bool{false, true} {
				e := newEnv(t, Options{Users: roleUsers(), AuthenticateMemberAPI: authMembers})
				as := basic(tc.user, passwords[tc.user])
				e.mustStatus(e.do("POST", groupPath("orders", "g"), createBody(2), basic("root", "a")), 201)

				hb := e.member("orders", "g", "m1").request(0)
				got := e.do("POST", groupPath("orders", "g")+"/members/m1/heartbeat", hb, as).status
				want := tc.openHB
				if authMembers {
					want = tc.authHB
				}
				if got != want {
					t.Errorf("heartbeat (authenticate-member-api=%v) = %d, want %d", authMembers, got, want)
				}
				if authMembers {
					continue
				}
				if got := e.do("GET", groupPath("orders", "g"), nil, as).status; got != tc.get {
					t.Errorf("GET group = %d, want %d", got, tc.get)
				}
				if got := e.do("GET", groupPath("orders", "g")+"/producer-routing", nil, as).status; got != tc.get {
					t.Errorf("GET routing = %d, want %d", got, tc.get)
				}
				if got := e.do("POST", groupPath("orders", "other"), createBody(1), as).status; got != tc.mutate {
					t.Errorf("POST create = %d, want %d", got, tc.mutate)
				}
				if got := e.do("GET", "/coord/v1/monitoring/health", nil, as).status; got != tc.monitor {
					t.Errorf("GET health = %d, want %d", got, tc.monitor)
				}
			}
		})
	}
}

func TestHeartbeatAuthenticatedNeedsCredentials(t *testing.T) {
	e := newEnv(t, Options{AuthenticateMemberAPI: true})
	e.createGroup("orders", "g", 2)
	r := e.do("POST", groupPath("orders", "g")+"/members/m1/heartbeat", e.member("orders", "g", "m1").request(0), noAuth())
	if r.status != 401 || r.header.Get("WWW-Authenticate") != wwwAuthenticate {
		t.Fatalf("unauthenticated heartbeat = %d %v", r.status, r.header)
	}
}

// TestUnauthorizedAndForbiddenBodies: the interceptor answers with empty
// bodies; only 401 carries the Basic challenge.
func TestUnauthorizedAndForbiddenBodies(t *testing.T) {
	e := newEnv(t, Options{Users: roleUsers()})
	writerToken := login(t, e, basic("writer", "w"))
	payload, _, _ := strings.Cut(writerToken, ".")
	forged := payload + "." + base64.RawURLEncoding.EncodeToString([]byte("not-the-signature-of-this-payload"))
	tampered := base64.RawURLEncoding.EncodeToString([]byte("v1\nwriter\n9999999999\nADMIN")) + "." + strings.SplitN(writerToken, ".", 2)[1]
	cases := map[string]reqOption{
		"missing header":   noAuth(),
		"unknown scheme":   header("Authorization", "Digest abc"),
		"bad base64":       header("Authorization", "Basic !!!"),
		"no colon":         header("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("writer"))),
		"wrong password":   basic("writer", "nope"),
		"unknown user":     basic("admin", "password"), // built-in admin is gone once users are configured
		"forged signature": bearer(forged),
		"tampered payload": bearer(tampered),
		"garbage token":    bearer("abc"),
	}
	for name, opt := range cases {
		t.Run(name, func(t *testing.T) {
			r := e.do("GET", "/coord/v1/monitoring/groups", nil, opt)
			if r.status != 401 || len(r.body) != 0 || r.header.Get("WWW-Authenticate") != wwwAuthenticate {
				t.Fatalf("got %d %q %v", r.status, r.body, r.header)
			}
		})
	}
	r := e.do("POST", "/coord/v1/streams/orders", createBody(1), basic("reader", "r"))
	if r.status != 403 || len(r.body) != 0 || r.header.Get("WWW-Authenticate") != "" {
		t.Fatalf("403 = %d %q %v", r.status, r.body, r.header)
	}
}

func TestSchemeIsCaseInsensitive(t *testing.T) {
	e := newEnv(t, Options{})
	token := login(t, e, basic("admin", "password"))
	for _, h := range []string{
		"basic " + base64.StdEncoding.EncodeToString([]byte("admin:password")),
		"BASIC " + base64.StdEncoding.EncodeToString([]byte("admin:password")),
		"bearer " + token,
		"BeArEr " + token,
	} {
		if got := e.do("GET", "/coord/v1/monitoring/health", nil, header("Authorization", h)).status; got != 200 {
			t.Errorf("%q = %d", h, got)
		}
	}
}

func login(t *testing.T, e *env, opts ...reqOption) string {
	t.Helper()
	var resp struct {
		AccessToken string `json:"accessToken"`
	}
	e.mustStatus(e.do("POST", RouteLogin, nil, opts...), 200).decode(t, &resp)
	return resp.AccessToken
}

func TestLoginByBody(t *testing.T) {
	e := newEnv(t, Options{})
	r := e.mustStatus(e.do("POST", RouteLogin, map[string]string{"username": "admin", "password": "password"}, noAuth()), 200)
	m := r.json(t)
	if m["tokenType"] != "Bearer" || m["expiresInSeconds"] != float64(604800) {
		t.Fatalf("login = %s", r.body)
	}
	wantRoles := []any{"ADMIN", "MEMBER", "MONITOR", "READ", "WRITE"}
	if !slices.Equal(m["roles"].([]any), wantRoles) {
		t.Fatalf("roles = %v, want sorted %v", m["roles"], wantRoles)
	}
	exp, err := time.Parse(time.RFC3339Nano, m["expiresAt"].(string))
	if err != nil || !exp.Equal(e.clock.Now().Add(7*24*time.Hour)) {
		t.Fatalf("expiresAt = %v (%v)", m["expiresAt"], err)
	}
	// Token format: b64url(payload) "." b64url(HMAC-SHA256(secret, b64url(payload))).
	token := m["accessToken"].(string)
	enc, _, _ := strings.Cut(token, ".")
	payload, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	want := "v1\nadmin\n" + strconv.FormatInt(exp.Unix(), 10) + "\nADMIN,MEMBER,MONITOR,READ,WRITE"
	if string(payload) != want {
		t.Fatalf("payload = %q, want %q", payload, want)
	}
	if got := e.do("GET", "/coord/v1/monitoring/session", nil, bearer(token)); got.status != 200 {
		t.Fatalf("bearer session = %d", got.status)
	}
}

func TestLoginByHeaderAndRefresh(t *testing.T) {
	e := newEnv(t, Options{Users: roleUsers()})
	// Blank username in the body → the Authorization header is used.
	first := e.mustStatus(e.do("POST", RouteLogin, map[string]string{"username": " ", "password": ""}, basic("writer", "w")), 200)
	token := first.json(t)["accessToken"].(string)
	e.clock.Advance(time.Hour)
	// A still-valid Bearer token buys a fresh one with a later expiry.
	second := e.mustStatus(e.do("POST", RouteLogin, nil, bearer(token)), 200).json(t)
	if second["accessToken"] == token || second["expiresAt"] == first.json(t)["expiresAt"] {
		t.Fatalf("refresh returned the same token: %v", second)
	}
	if !slices.Equal(second["roles"].([]any), []any{"WRITE"}) {
		t.Fatalf("roles = %v", second["roles"])
	}
}

// TestLoginFailure: login 401s are Spring's generic JSON, not the
// interceptor's empty body.
func TestLoginFailure(t *testing.T) {
	e := newEnv(t, Options{})
	for name, r := range map[string]reply{
		"wrong body password": e.do("POST", RouteLogin, map[string]string{"username": "admin", "password": "x"}, noAuth()),
		"no credentials":      e.do("POST", RouteLogin, nil, noAuth()),
		"bad header":          e.do("POST", RouteLogin, nil, basic("admin", "x")),
	} {
		t.Run(name, func(t *testing.T) { r.wantFramework(t, 401, RouteLogin) })
	}
}

func TestTokenExpiry(t *testing.T) {
	e := newEnv(t, Options{TokenTTL: time.Hour})
	token := login(t, e, basic("admin", "password"))
	e.clock.Advance(59 * time.Minute)
	e.mustStatus(e.do("GET", "/coord/v1/monitoring/health", nil, bearer(token)), 200)
	e.clock.Advance(time.Minute)
	r := e.do("GET", "/coord/v1/monitoring/health", nil, bearer(token))
	if r.status != 401 || len(r.body) != 0 || r.header.Get("WWW-Authenticate") != wwwAuthenticate {
		t.Fatalf("expired token = %d %q", r.status, r.body)
	}
	if e.do("POST", RouteLogin, nil, bearer(token)).status != 401 {
		t.Fatal("an expired token must not be refreshable")
	}
}

// TestTokenSecret: a blank secret derives from the admin credentials, so a
// password change invalidates tokens; an explicit secret is shared.
func TestTokenSecret(t *testing.T) {
	issuer := newEnv(t, Options{AdminPassword: "one"})
	token := login(t, issuer, basic("admin", "one"))
	samePassword := newEnv(t, Options{AdminPassword: "one"})
	otherPassword := newEnv(t, Options{AdminPassword: "two"})
	if got := samePassword.do("GET", RouteHealth, nil, bearer(token)).status; got != 200 {
		t.Errorf("same derived secret = %d", got)
	}
	if got := otherPassword.do("GET", RouteHealth, nil, bearer(token)).status; got != 401 {
		t.Errorf("changed admin password = %d, want 401", got)
	}
	a := newEnv(t, Options{AdminPassword: "one", TokenSecret: "shared"})
	b := newEnv(t, Options{AdminPassword: "two", TokenSecret: "shared"})
	if got := b.do("GET", RouteHealth, nil, bearer(login(t, a, basic("admin", "one")))).status; got != 200 {
		t.Errorf("shared explicit secret = %d", got)
	}
}

func TestUsersReplaceBuiltInAdmin(t *testing.T) {
	if got := New(Options{}).Users(); len(got) != 1 || got[0].Username != "admin" || got[0].Password != "password" || !slices.Equal(got[0].Roles, AllRoles) {
		t.Fatalf("default users = %+v", got)
	}
	configured := New(Options{Users: []User{{Username: "ci", Password: "p", Roles: []Role{RoleWrite}}}}).Users()
	if len(configured) != 1 || configured[0].Username != "ci" {
		t.Fatalf("configured users = %+v", configured)
	}
}

func TestSessionAndPublicEndpoints(t *testing.T) {
	e := newEnv(t, Options{Users: roleUsers()})
	token := login(t, e, basic("monitor", "m"))
	m := e.mustStatus(e.do("GET", RouteSession, nil, bearer(token)), 200).json(t)
	if m["authenticated"] != true || m["username"] != "monitor" || !slices.Equal(m["roles"].([]any), []any{"MONITOR"}) {
		t.Fatalf("session = %v", m)
	}
	if got := e.do("GET", RouteActuatorInfo, nil, noAuth()).status; got != http.StatusOK {
		t.Fatalf("/actuator/info = %d", got)
	}
	e.do("GET", "/v3/api-docs", nil, noAuth()).wantFramework(t, 404, "/v3/api-docs")
}
