package client

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestBasicBearerAndAnonymousHeaders(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) { writeJSON(w, 200, map[string]any{}) })
	ctx := context.Background()

	basic := newTestClient(t, f.URL, nil)
	bearer := newTestClient(t, f.URL, func(cfg *Config) { cfg.Username, cfg.Password, cfg.Token = "", "", "tok-123" })
	anonymous := newTestClient(t, f.URL, func(cfg *Config) { cfg.Username, cfg.Password = "", "" })
	for _, c := range []*Client{basic, bearer, anonymous} {
		if _, err := c.Health(ctx); err != nil {
			t.Fatal(err)
		}
	}
	reqs := f.requests()
	want := []string{"Basic " + base64.StdEncoding.EncodeToString([]byte("admin:s3cret-pw")), "Bearer tok-123", ""}
	for i, r := range reqs {
		if got := r.Header.Get("Authorization"); got != want[i] {
			t.Errorf("request %d Authorization = %q, want %q", i, got, want[i])
		}
	}
}

// loginFake serves /auth/login with tokens tok-1, tok-2, ... and accepts on
// every other route only the tokens in accepted (all when nil).
type loginFake struct {
	*fakeCoordinator
	logins   atomic.Int32
	release  chan struct{} // when non-nil, the first login blocks until it is closed
	entered  chan struct{}
	accepted func(token string) bool
	expires  func(n int32) string
}

func newLoginFake(t *testing.T) *loginFake {
	lf := &loginFake{entered: make(chan struct{}, 100)}
	lf.fakeCoordinator = newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/coord/v1/auth/login" {
			k := lf.logins.Add(1)
			lf.entered <- struct{}{}
			if lf.release != nil && k == 1 {
				<-lf.release
			}
			expiresAt := "2099-01-01T00:00:00Z"
			if lf.expires != nil {
				expiresAt = lf.expires(k)
			}
			writeJSON(w, 200, map[string]any{"accessToken": "tok-" + string('0'+k), "tokenType": "Bearer",
				"expiresAt": expiresAt, "expiresInSeconds": 604800, "roles": []string{"READ", "WRITE"}})
			return
		}
		token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if lf.accepted != nil && !lf.accepted(token) {
			w.Header().Set("WWW-Authenticate", `Basic realm="redis-stream-coordinator"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		writeMigration(w, 202)
	})
	return lf
}

func loginClient(t *testing.T, url string) *Client {
	return newTestClient(t, url, func(cfg *Config) { cfg.Login = true })
}

func TestLoginOnceSharedByConcurrentCalls(t *testing.T) {
	lf := newLoginFake(t)
	lf.release = make(chan struct{})
	c := loginClient(t, lf.URL)

	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.GetMigration(context.Background(), "orders", "billing", "reshard-1")
			errs <- err
		}()
	}
	<-lf.entered // one login is in flight; the others queue behind it or find the token
	close(lf.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := lf.logins.Load(); got != 1 {
		t.Errorf("logins = %d, want exactly 1", got)
	}
	for _, r := range lf.requests() {
		if r.RequestURI == "/coord/v1/auth/login" {
			if r.Header.Get("Authorization") != "" {
				t.Error("login must carry credentials in the body, not a header")
			}
			if got := mustDecode(t, r.Body); !reflect.DeepEqual(got, map[string]any{"username": "admin", "password": "s3cret-pw"}) {
				t.Errorf("login body %v", got)
			}
			continue
		}
		if got := r.Header.Get("Authorization"); got != "Bearer tok-1" {
			t.Errorf("call sent Authorization %q", got)
		}
	}
}

func TestReloginOnceOn401KeepsRequestID(t *testing.T) {
	lf := newLoginFake(t)
	lf.accepted = func(token string) bool { return token == "tok-2" } // tok-1 was "rotated away"
	c := loginClient(t, lf.URL)

	if _, err := c.ScaleGroup(context.Background(), "orders", "billing", 8, Mutation{}); err != nil {
		t.Fatalf("ScaleGroup: %v", err)
	}
	if got := lf.logins.Load(); got != 2 {
		t.Errorf("logins = %d, want 2", got)
	}
	var ids []string
	for _, r := range lf.requests() {
		if strings.HasSuffix(r.RequestURI, "/scale") {
			ids = append(ids, r.Header.Get("X-Request-Id"))
		}
	}
	if len(ids) != 2 || ids[0] != ids[1] || ids[0] == "" {
		t.Errorf("scale attempts sent request ids %q, want the same id twice", ids)
	}
}

func TestReloginHappensOnlyOncePerCall(t *testing.T) {
	lf := newLoginFake(t)
	lf.accepted = func(string) bool { return false }
	c := loginClient(t, lf.URL)

	_, err := c.ScaleGroup(context.Background(), "orders", "billing", 8, Mutation{})
	if !IsUnauthorized(err) || !strings.Contains(err.Error(), "even after logging in again") {
		t.Fatalf("got %v", err)
	}
	if got := lf.logins.Load(); got != 2 {
		t.Errorf("logins = %d, want 2", got)
	}
	if got := lf.count(); got != 4 {
		t.Errorf("requests = %d, want 4 (login, call, login, call)", got)
	}
}

func TestLoginRejectedIsClearAndNotRetried(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeJSON(w, 401, map[string]any{"timestamp": "2025-01-01T00:00:00.000+00:00", "status": 401,
			"error": "Unauthorized", "path": "/coord/v1/auth/login"})
	})
	c := loginClient(t, f.URL)
	_, err := c.Groups(context.Background())
	if !IsUnauthorized(err) || !strings.Contains(err.Error(), "login failed: the coordinator rejected the username or password") {
		t.Fatalf("got %v", err)
	}
	if ErrorCode(err) != "" {
		t.Errorf("Spring's body has no errorCode, got %q", ErrorCode(err))
	}
	if got := f.count(); got != 1 {
		t.Errorf("requests = %d, want 1", got)
	}
}

func TestExpiringTokenIsRenewed(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	lf := newLoginFake(t)
	lf.expires = func(int32) string { return clock().Add(time.Hour).Format(time.RFC3339) }
	c := loginClient(t, lf.URL)
	c.now = clock

	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := c.GetMigration(ctx, "orders", "billing", "reshard-1"); err != nil {
			t.Fatal(err)
		}
	}
	if got := lf.logins.Load(); got != 1 {
		t.Fatalf("logins = %d, want 1 while the token is fresh", got)
	}
	mu.Lock()
	now = now.Add(59*time.Minute + 30*time.Second) // inside the refresh margin
	mu.Unlock()
	if _, err := c.GetMigration(ctx, "orders", "billing", "reshard-1"); err != nil {
		t.Fatal(err)
	}
	if got := lf.logins.Load(); got != 2 {
		t.Errorf("logins = %d, want 2 after the token neared expiry", got)
	}
}

func TestExplicitLogin(t *testing.T) {
	lf := newLoginFake(t)
	c := newTestClient(t, lf.URL, nil) // Basic client
	resp, err := c.Login(context.Background(), "reader", "pw2")
	if err != nil {
		t.Fatal(err)
	}
	if resp.AccessToken != "tok-1" || resp.ExpiresInSeconds != 604800 || resp.ExpiresAt.IsZero() ||
		!reflect.DeepEqual(resp.Roles, []string{"READ", "WRITE"}) {
		t.Errorf("response %+v", resp)
	}
	// A blank username makes the server use the Authorization header instead.
	if _, err := c.Login(context.Background(), "", ""); err != nil {
		t.Fatal(err)
	}
	reqs := lf.requests()
	if got := mustDecode(t, reqs[0].Body); got["username"] != "reader" || got["password"] != "pw2" {
		t.Errorf("login body %v", got)
	}
	if reqs[0].Header.Get("Authorization") != "" {
		t.Error("explicit credentials must not be mixed with the client's header")
	}
	if got := reqs[1].Header.Get("Authorization"); !strings.HasPrefix(got, "Basic ") {
		t.Errorf("blank-username login sent Authorization %q", got)
	}
}

func TestWaiterRunsItsOwnLoginWhenTheLeaderIsCancelled(t *testing.T) {
	lf := newLoginFake(t)
	firstLogin := make(chan struct{})
	lf.release = firstLogin
	c := loginClient(t, lf.URL)

	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	leaderErr := make(chan error, 1)
	go func() {
		_, err := c.GetMigration(leaderCtx, "orders", "billing", "reshard-1")
		leaderErr <- err
	}()
	<-lf.entered // the leader's login is in flight
	waiterErr := make(chan error, 1)
	go func() {
		_, err := c.GetMigration(context.Background(), "orders", "billing", "reshard-1")
		waiterErr <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the waiter queue behind the flight; the outcome does not depend on it
	cancelLeader()
	if err := <-leaderErr; !errors.Is(err, context.Canceled) {
		t.Errorf("leader: %v", err)
	}
	close(firstLogin)
	if err := <-waiterErr; err != nil {
		t.Fatalf("waiter inherited the leader's cancellation: %v", err)
	}
	if got := lf.logins.Load(); got != 2 {
		t.Errorf("logins = %d, want 2", got)
	}
}

func TestTokenExpiry(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := now.Add(time.Hour)
	if got := tokenExpiry(&LoginResponse{ExpiresAt: Time{at}, ExpiresInSeconds: 5}, now); !got.Equal(at) {
		t.Errorf("expiresAt ignored: %v", got)
	}
	if got := tokenExpiry(&LoginResponse{ExpiresInSeconds: 604800}, now); !got.Equal(now.Add(7 * 24 * time.Hour)) {
		t.Errorf("expiresInSeconds ignored: %v", got)
	}
	if got := tokenExpiry(&LoginResponse{}, now); !got.IsZero() {
		t.Errorf("unknown expiry: %v", got)
	}
}

func TestMalformedLoginResponseIsNotQuoted(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.WriteHeader(200)
		_, _ = w.Write([]byte(`{"accessToken":"leaky-token-value",`)) // truncated
	})
	c := newTestClient(t, f.URL, nil)
	_, err := c.Login(context.Background(), "admin", "pw")
	if err == nil || strings.Contains(err.Error(), "leaky-token-value") || !strings.Contains(err.Error(), "withheld") {
		t.Fatalf("got %v", err)
	}
}
