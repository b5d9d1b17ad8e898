// Package client is the HTTP client for the Redis Stream Coordinator admin,
// monitoring and member APIs (base path /coord/v1).
//
// It owns the transport concerns the provider resources should not repeat:
// authentication (Basic, Bearer, or a login-issued Bearer token), audit fields
// and request ids on every mutation, the retry table for transient
// coordinator errors, the distinction between a safely retryable failure and
// an ambiguous one (a create that may have been applied), error decoding and
// redacted logging through the tflog subsystem "coordinator".
package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-cleanhttp"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/blank"
)

// APIBasePath is appended to Config.Endpoint.
const APIBasePath = "/coord/v1"

// Defaults applied by New. MaxRetries has no implicit default (0 means no
// retries); DefaultMaxRetries is what the provider passes when unset.
const (
	DefaultMaxRetries     = 10
	DefaultRetryWaitMin   = time.Second
	DefaultRetryWaitMax   = 30 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	// DefaultReadTimeout bounds a call, retries and waits included, whose
	// context has no deadline of its own: reads and data sources.
	DefaultReadTimeout = 5 * time.Minute
	// DefaultConnectRetryBudget bounds how long a run of connection failures
	// (refused, network unreachable, temporary DNS failure) is retried: long
	// enough to ride out a coordinator restart, short enough that a wrong
	// endpoint fails in seconds rather than after max_retries × backoff.
	DefaultConnectRetryBudget = 3 * time.Second
	// DefaultConnectTimeout bounds one TCP connect with the default
	// transport. A connect timeout is not retried.
	DefaultConnectTimeout  = 3 * time.Second
	DefaultRequestedBy     = "terraform"
	DefaultRequestIDPrefix = "terraform"
	DefaultUserAgent       = "terraform-provider-redisstreamcoordinator"
)

// Config configures a Client. Zero values take the documented defaults.
type Config struct {
	// Endpoint is the coordinator base URL, e.g. "http://127.0.0.1:8080".
	// A trailing "/" or a trailing "/coord/v1" is accepted and stripped.
	Endpoint string
	// Username and Password are used for HTTP Basic auth, or exchanged for a
	// Bearer token when Login is set.
	Username, Password string
	// Token is a pre-issued Bearer token; mutually exclusive with Password.
	Token string
	// Login exchanges Username/Password for a Bearer token via POST
	// /auth/login once, and again once when a call gets 401.
	Login bool
	// RequestedBy is the audit "requestedBy" default (default "terraform").
	RequestedBy string
	// DefaultReason is the audit "reason" default (default
	// "terraform apply <RunID>").
	DefaultReason string
	// RequestIDPrefix starts every X-Request-Id (default "terraform").
	RequestIDPrefix string
	// RunID identifies this Terraform run in request ids and reasons.
	// Default: detected from CI environment variables, else random per Client.
	RunID string
	// MaxRetries is the number of transport retries per call; 0 disables
	// retries and a negative value is an error.
	MaxRetries int
	// RetryWaitMin and RetryWaitMax bound the jittered exponential backoff
	// (defaults 1s and 30s). A server Retry-After overrides them.
	RetryWaitMin, RetryWaitMax time.Duration
	// RequestTimeout bounds each attempt (default 30s).
	RequestTimeout time.Duration
	// ReadTimeout bounds each call made on a context without a deadline,
	// its retries and waits included (default DefaultReadTimeout).
	ReadTimeout time.Duration
	// ConnectRetryBudget bounds how long connection failures are retried
	// (default DefaultConnectRetryBudget); MaxRetries bounds them as well.
	ConnectRetryBudget time.Duration
	// ConnectTimeout bounds one TCP connect of the default transport (default
	// DefaultConnectTimeout); it does not apply to HTTPTransport.
	ConnectTimeout time.Duration
	// CACertPEM is an extra CA bundle trusted in addition to the system roots.
	CACertPEM string
	// InsecureSkipVerify disables TLS certificate verification.
	InsecureSkipVerify bool
	// UserAgent is sent on every request.
	UserAgent string
	// Getenv reads CI environment variables for run-id detection; nil means
	// os.Getenv.
	Getenv func(string) string
	// HTTPTransport overrides the base transport. An *http.Transport is
	// cloned and still gets CACertPEM/InsecureSkipVerify applied; any other
	// RoundTripper is used as is. The default transport honours HTTPS_PROXY.
	HTTPTransport http.RoundTripper
}

// Client talks to one coordinator. It is safe for concurrent use.
type Client struct {
	origin          string // scheme://host[:port]
	apiPath         string // escaped path prefix of every API request, e.g. "/proxy/coord/v1"
	http            *http.Client
	auth            *authenticator
	requestedBy     string
	defaultReason   string
	requestIDPrefix string
	runID           string
	userAgent       string
	maxRetries      int
	retryWaitMin    time.Duration
	retryWaitMax    time.Duration
	connectBudget   time.Duration
	readTimeout     time.Duration

	// now is the clock for Retry-After dates, deadlines and token expiry.
	now func() time.Time
	// retryAfterUnit is the length of one Retry-After second. It is always
	// time.Second in production; tests shrink it so they need not sleep.
	retryAfterUnit time.Duration
}

// New validates cfg and builds a Client. It does not call the API.
func New(cfg Config) (*Client, error) {
	origin, basePath, err := normalizeEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	if err := validateAuth(cfg); err != nil {
		return nil, err
	}
	c := &Client{
		origin:         origin,
		apiPath:        basePath + APIBasePath,
		maxRetries:     cfg.MaxRetries,
		retryWaitMin:   cfg.RetryWaitMin,
		retryWaitMax:   cfg.RetryWaitMax,
		userAgent:      strings.TrimSpace(cfg.UserAgent),
		now:            time.Now,
		retryAfterUnit: time.Second,
	}
	if c.maxRetries < 0 {
		return nil, fmt.Errorf("coordinator client: max retries must not be negative, got %d", cfg.MaxRetries)
	}
	if cfg.RetryWaitMin < 0 || cfg.RetryWaitMax < 0 || cfg.RequestTimeout < 0 || cfg.ReadTimeout < 0 || cfg.ConnectRetryBudget < 0 || cfg.ConnectTimeout < 0 {
		return nil, errors.New("coordinator client: retry waits, timeouts and the connect retry budget must not be negative")
	}
	c.connectBudget = cfg.ConnectRetryBudget
	if c.readTimeout = cfg.ReadTimeout; c.readTimeout == 0 {
		c.readTimeout = DefaultReadTimeout
	}
	if c.connectBudget == 0 {
		c.connectBudget = DefaultConnectRetryBudget
	}
	if c.retryWaitMin == 0 {
		c.retryWaitMin = DefaultRetryWaitMin
	}
	if c.retryWaitMax == 0 {
		c.retryWaitMax = DefaultRetryWaitMax
	}
	if c.retryWaitMin > c.retryWaitMax {
		return nil, fmt.Errorf("coordinator client: retry wait min (%s) exceeds retry wait max (%s)", c.retryWaitMin, c.retryWaitMax)
	}
	timeout := cfg.RequestTimeout
	if timeout == 0 {
		timeout = DefaultRequestTimeout
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}

	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	c.runID = detectRunID(cfg.RunID, getenv)
	c.requestIDPrefix = sanitizeID(cfg.RequestIDPrefix)
	if c.requestIDPrefix == "" {
		c.requestIDPrefix = DefaultRequestIDPrefix
	}
	c.requestedBy = blank.Trim(cfg.RequestedBy)
	if c.requestedBy == "" {
		c.requestedBy = DefaultRequestedBy
	}
	c.defaultReason = blank.Trim(cfg.DefaultReason)
	if c.defaultReason == "" {
		c.defaultReason = "terraform apply " + c.runID
	}

	transport, err := buildTransport(cfg)
	if err != nil {
		return nil, err
	}
	c.http = &http.Client{
		Transport: transport,
		Timeout:   timeout,
		// A followed redirect would turn a POST into a GET and could carry
		// credentials elsewhere; surface it as an error instead.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	c.auth = newAuthenticator(c, cfg)
	return c, nil
}

// Endpoint is the coordinator base URL the client calls, without the API
// path: scheme://host[:port][/proxy prefix]. It never carries user info.
func (c *Client) Endpoint() string { return c.origin + strings.TrimSuffix(c.apiPath, APIBasePath) }

// RunID is the run identifier used in request ids and the default reason.
func (c *Client) RunID() string { return c.runID }

// RequestedBy is the default audit "requestedBy".
func (c *Client) RequestedBy() string { return c.requestedBy }

// DefaultReason is the default audit "reason".
func (c *Client) DefaultReason() string { return c.defaultReason }

// normalizeEndpoint splits the endpoint into its origin and an optional base
// path (a reverse proxy prefix), dropping a trailing "/" or "/coord/v1".
func normalizeEndpoint(endpoint string) (origin, basePath string, err error) {
	endpoint = strings.TrimSpace(endpoint)
	if endpoint == "" {
		return "", "", errors.New("coordinator client: endpoint is required")
	}
	// Every message quotes the endpoint redacted: it may hold a password.
	shown := RedactEndpoint(endpoint)
	if EndpointHasUserInfo(endpoint) {
		return "", "", fmt.Errorf("coordinator client: the endpoint contains user info; put credentials in username/password or token "+
			"(without it the endpoint is %q)", shown)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole string
		}
		return "", "", fmt.Errorf("coordinator client: invalid endpoint %q: %w", shown, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", "", fmt.Errorf("coordinator client: endpoint %q must use http or https", shown)
	}
	if u.Host == "" {
		return "", "", fmt.Errorf("coordinator client: endpoint %q has no host", shown)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil {
		return "", "", fmt.Errorf("coordinator client: endpoint %q must not contain credentials, a query or a fragment", shown)
	}
	p := strings.TrimRight(u.EscapedPath(), "/")
	p = strings.TrimSuffix(p, APIBasePath)
	return u.Scheme + "://" + u.Host, strings.TrimRight(p, "/"), nil
}

func validateAuth(cfg Config) error {
	switch {
	case cfg.Token != "" && cfg.Password != "":
		return errors.New("coordinator client: token and password are mutually exclusive")
	case cfg.Login && cfg.Token != "":
		return errors.New("coordinator client: login mode exchanges username/password for a token; do not also set a token")
	case cfg.Login && (cfg.Username == "" || cfg.Password == ""):
		return errors.New("coordinator client: login mode needs both username and password")
	case cfg.Password != "" && cfg.Username == "":
		return errors.New("coordinator client: a password needs a username")
	}
	return nil
}

func buildTransport(cfg Config) (http.RoundTripper, error) {
	var tlsConfig *tls.Config
	if cfg.CACertPEM != "" || cfg.InsecureSkipVerify {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // opt-in
		if cfg.CACertPEM != "" {
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM([]byte(cfg.CACertPEM)) {
				return nil, errors.New("coordinator client: ca_cert_pem contains no valid PEM certificate")
			}
			tlsConfig.RootCAs = pool
		}
	}
	switch base := cfg.HTTPTransport.(type) {
	case nil:
		// Pooled cleanhttp transport: proxy from environment, sane timeouts,
		// no shared global state.
		t := cleanhttp.DefaultPooledTransport()
		connectTimeout := cfg.ConnectTimeout
		if connectTimeout == 0 {
			connectTimeout = DefaultConnectTimeout
		}
		t.DialContext = (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext
		if tlsConfig != nil {
			t.TLSClientConfig = tlsConfig
		}
		return t, nil
	case *http.Transport:
		t := base.Clone()
		if tlsConfig != nil {
			t.TLSClientConfig = tlsConfig
		}
		return t, nil
	default:
		return base, nil
	}
}
