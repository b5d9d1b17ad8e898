package client

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"sync"
	"time"
)

// Auth modes, also used to explain a 401.
const (
	authModeNone      = "none"
	authModeBasic     = "basic"
	authModeToken     = "token"
	authModeLogin     = "login"
	authModeLoginCall = "login-call"
)

// tokenRefreshMargin makes a cached login token count as expired a little
// early, so a call never starts with a token that dies in flight.
const tokenRefreshMargin = time.Minute

// authHeader is the Authorization value for one request.
type authHeader struct {
	value     string // full header value, "" = none
	secret    string // the part to mask in logs
	mode      string
	fromLogin bool
}

// authenticator produces Authorization headers. In login mode it exchanges
// the username/password for a Bearer token once and shares it between
// concurrent calls.
//
// Login-issued tokens live 7 days by default (REDIS_STREAM_COORDINATOR_TOKEN_TTL)
// and cannot be revoked short of rotating the coordinator's token secret, so
// the client never persists or logs them and asks for a new one only when the
// cached one is about to expire or was rejected.
type authenticator struct {
	c        *Client
	mode     string
	username string
	password string
	static   authHeader // basic/token/none

	mu      sync.Mutex
	token   string
	expiry  time.Time // zero = unknown; then valid until a 401
	pending *loginFlight
}

// loginFlight is one login in progress; waiters block on done.
type loginFlight struct {
	done  chan struct{}
	token string
	err   error
}

func newAuthenticator(c *Client, cfg Config) *authenticator {
	a := &authenticator{c: c, username: cfg.Username, password: cfg.Password}
	switch {
	case cfg.Login:
		a.mode = authModeLogin
	case cfg.Token != "":
		a.mode = authModeToken
		a.static = authHeader{value: "Bearer " + cfg.Token, secret: cfg.Token, mode: a.mode}
	case cfg.Username != "":
		a.mode = authModeBasic
		creds := base64.StdEncoding.EncodeToString([]byte(cfg.Username + ":" + cfg.Password))
		a.static = authHeader{value: "Basic " + creds, secret: creds, mode: a.mode}
	default:
		a.mode = authModeNone
		a.static = authHeader{mode: a.mode}
	}
	return a
}

// secrets lists every configured credential string, for log masking.
func (a *authenticator) secrets() []string {
	out := []string{a.password, a.static.secret}
	a.mu.Lock()
	out = append(out, a.token)
	a.mu.Unlock()
	return out
}

// header returns the Authorization header for the next request, logging in
// first when needed.
func (a *authenticator) header(ctx context.Context) (authHeader, error) {
	if a.mode != authModeLogin {
		return a.static, nil
	}
	token, err := a.loginToken(ctx)
	if err != nil {
		return authHeader{}, err
	}
	return authHeader{value: "Bearer " + token, secret: token, mode: a.mode, fromLogin: true}, nil
}

// loginToken returns the cached token or performs exactly one login for all
// concurrent callers. If the caller that ran the login was cancelled, a
// waiter whose own context is still alive runs a fresh login instead of
// inheriting someone else's cancellation.
func (a *authenticator) loginToken(ctx context.Context) (string, error) {
	for {
		a.mu.Lock()
		if a.token != "" && (a.expiry.IsZero() || a.c.now().Add(tokenRefreshMargin).Before(a.expiry)) {
			token := a.token
			a.mu.Unlock()
			return token, nil
		}
		if flight := a.pending; flight != nil {
			a.mu.Unlock()
			select {
			case <-flight.done:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			if flight.err != nil && isContextError(flight.err) && ctx.Err() == nil {
				continue
			}
			return flight.token, flight.err
		}
		flight := &loginFlight{done: make(chan struct{})}
		a.pending = flight
		a.mu.Unlock()

		resp, err := a.c.login(ctx, a.username, a.password, authHeader{})
		a.mu.Lock()
		if err == nil {
			a.token = resp.AccessToken
			a.expiry = tokenExpiry(resp, a.c.now())
			flight.token = resp.AccessToken
		}
		flight.err = err
		a.pending = nil
		a.mu.Unlock()
		close(flight.done)
		return flight.token, flight.err
	}
}

// invalidate drops the cached token if it is still the rejected one; another
// goroutine may already have replaced it.
func (a *authenticator) invalidate(rejected string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token == rejected {
		a.token, a.expiry = "", time.Time{}
	}
}

func tokenExpiry(resp *LoginResponse, now time.Time) time.Time {
	if !resp.ExpiresAt.IsZero() {
		return resp.ExpiresAt.Time
	}
	if resp.ExpiresInSeconds > 0 {
		return now.Add(time.Duration(resp.ExpiresInSeconds) * time.Second)
	}
	return time.Time{}
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// Login exchanges a username and password for a Bearer token (POST
// /auth/login) without touching the client's own credentials; the ephemeral
// token resource uses it. With a blank username the coordinator falls back to
// the request's Authorization header, so the client's configured credentials
// are sent in that case (a valid Bearer token yields a fresh one). The
// returned token is valid for 7 days by default and cannot be revoked short of
// rotating the coordinator's token secret.
func (c *Client) Login(ctx context.Context, username, password string) (*LoginResponse, error) {
	var fallback authHeader
	if username == "" {
		var err error
		if fallback, err = c.auth.header(ctx); err != nil {
			return nil, err
		}
	}
	return c.login(ctx, username, password, fallback)
}

func (c *Client) login(ctx context.Context, username, password string, auth authHeader) (*LoginResponse, error) {
	ctx = maskSecrets(ctx, password, auth.secret)
	var out LoginResponse
	cl := &call{
		method:    http.MethodPost,
		path:      "/auth/login",
		operation: "login",
		body:      loginRequest{Username: username, Password: password},
		resend:    resendIdempotent, // issuing a token changes nothing on the server
		fixedAuth: &auth,
		authMode:  authModeLoginCall,
		out:       &out,
		secret:    true,
		secrets:   []string{password},
	}
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	if out.AccessToken == "" {
		return nil, errors.New("coordinator login: response carried no accessToken")
	}
	return &out, nil
}
