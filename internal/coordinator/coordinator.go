// Package coordinator is an in-process stand-in for the Redis Stream
// Coordinator server (API v1, server 0.1.0) running with the in-memory store
// and, unless Options.StreamProvisioning is set, stream provisioning
// disabled. Acceptance tests and the demo run against it, so it reproduces
// the real server's behaviour, including the places where the server's code
// disagrees with its own documentation. Test hooks model what the real
// server does under failure without timing: faults (InjectFault, including
// Spring's generic 500 of a store failure), provisioning failures
// (FailProvisioning, FailStreamScaleAt), held creates (HoldCreate), Redis
// keys (RedisKeys, DeleteRedisKeys), restarts (Restart, RestartWith), rate
// limit windows (RateLimitManualReset, ResetRateLimits*) and the loop (Tick).
// Options.Numbering varies what the contract leaves open (version and epoch
// steps, shard assignment, listing order), so tests can be held to the
// contract rather than to this stand-in's own numbers.
package coordinator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Options configures a Coordinator. Zero values take the real server's
// defaults.
type Options struct {
	// Users replaces the built-in "admin" user once non-empty, as
	// coordinator.api.users does on the server.
	Users []User
	// AdminPassword is the built-in admin's password, default "password".
	AdminPassword string
	// TokenSecret signs Bearer tokens; blank derives it from the admin
	// username and password, so changing the password invalidates tokens.
	TokenSecret string
	// TokenTTL is the Bearer token lifetime, default 7 days.
	TokenTTL time.Duration
	// CoordinatorID is reported by health and stored in audit events.
	CoordinatorID string
	// DefaultInitialShardCount applies when a create omits initialShardCount.
	DefaultInitialShardCount int
	// RateLimitEnabled turns on the admin mutation rate limit (§8).
	RateLimitEnabled bool
	// RateLimitPerWindow is the limit per key and window, default 60. Zero
	// takes the default; a negative value rejects every limited request, as a
	// configured limit ≤ 0 does on the server.
	RateLimitPerWindow int
	// RateLimitWindow is the fixed window length, default 60s.
	RateLimitWindow time.Duration
	// RateLimitManualReset keeps every rate-limit window open until
	// ResetRateLimits is called, however much time passes, so a test decides
	// when a refused client may get through. Retry-After is still computed
	// from RateLimitWindow.
	RateLimitManualReset bool
	// StreamProvisioning is COORDINATOR_STREAMS_PROVISIONING_ENABLED: creates,
	// scales and producer routing provision the shards' Redis stream keys
	// (kept in memory, see RedisKeys), and the first group of a prefix is
	// refused with 409 STREAM_PREFIX_ALREADY_EXISTS while key p or any of
	// p:0..n-1 exists.
	StreamProvisioning bool
	// TickInterval is the background loop period, default 1s.
	TickInterval time.Duration
	// HeartbeatInterval is returned to members as heartbeatIntervalMs.
	HeartbeatInterval time.Duration
	// MemberLeaseTTL is how long a heartbeat keeps a member live.
	MemberLeaseTTL time.Duration
	// RebalanceTimeout bounds how long a member may hold shards it was told
	// to revoke before it is fenced.
	RebalanceTimeout time.Duration
	// StaleMemberRetention is how long EXPIRED, FENCED and empty LEAVING
	// members stay visible after their last heartbeat.
	StaleMemberRetention time.Duration
	// AuthenticateMemberAPI requires the MEMBER grant on heartbeats.
	AuthenticateMemberAPI bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// AuditLog receives one JSON line per audit event; nil writes nothing.
	AuditLog io.Writer
	// Numbering picks, where the contract leaves it open, how the stand-in
	// numbers versions and epochs, assigns shards and orders listings. The
	// zero value is the real server's behaviour as read from its source.
	Numbering Numbering
}

// Numbering is what a conformant coordinator may do differently from the
// real server without breaking the contract (CONTRACT §4, §5, §7): the
// contract fixes that a new group starts at metadataVersion, groupEpoch and
// assignmentEpoch 1 and which events raise metadataVersion and groupEpoch
// (bumpMetadata), not by how much each rises. Every Numbering moves them on
// exactly those events; the strides vary. Run the acceptance suite against a
// stand-in with AlternativeNumbering to check that it asserts the contract,
// not this stand-in's incidental numbers.
type Numbering struct {
	// VersionStride is how far metadataVersion advances per bump (default 1).
	VersionStride int64
	// EpochStride is how far groupEpoch advances per membership or metadata
	// change (default 1); assignmentEpoch follows it.
	EpochStride int64
	// ContiguousAssignment gives each live member a contiguous range of
	// shards instead of spreading them round-robin.
	ContiguousAssignment bool
	// ReverseListing lists groups (GET /monitoring/groups) in reverse name
	// order; the contract gives no order.
	ReverseListing bool
}

// AlternativeNumbering differs from the real server in every way Numbering
// can.
var AlternativeNumbering = Numbering{VersionStride: 3, EpochStride: 2, ContiguousAssignment: true, ReverseListing: true}

func (n Numbering) versionStride() int64 { return max(n.VersionStride, 1) }
func (n Numbering) epochStride() int64   { return max(n.EpochStride, 1) }

// Server defaults (CONTRACT §13).
const (
	defaultAdminUsername     = "admin"
	defaultAdminPassword     = "password"
	defaultTokenTTL          = 7 * 24 * time.Hour
	defaultCoordinatorID     = "local-coordinator"
	defaultInitialShardCount = 12
	defaultRateLimit         = 60
	defaultRateLimitWindow   = 60 * time.Second
	defaultTickInterval      = time.Second
	defaultHeartbeatInterval = 3 * time.Second
	defaultMemberLeaseTTL    = 15 * time.Second
	defaultRebalanceTimeout  = 60 * time.Second
	defaultStaleRetention    = 10 * time.Minute
)

// Coordinator is the stand-in server. All coordinator state lives in memory
// behind one mutex, like the single-instance memory store.
type Coordinator struct {
	opts        Options
	users       []User
	tokenSecret []byte

	mu         sync.Mutex // guards the store below
	groups     map[groupKey]*group
	failScale  map[string]int               // stream prefix → group index whose provisioning fails
	undrained  map[shardKey]map[string]bool // removed key p:i → consumer groups with backlog
	redisKeys  map[string]bool              // Redis keys made by provisioning ("p:i") or SetRedisKey
	provFaults []*ProvisioningFault
	holds      []*CreateHold

	limiter  rateLimiter
	audit    auditLog
	counts   requestCounter
	faults   faultQueue
	inflight inflightTracker

	life       sync.Mutex // guards the fields below
	addr       string
	srv        *http.Server
	serveErr   chan struct{} // closed when the current Serve returns
	started    bool
	restarting bool
	closed     bool
	closing    chan struct{} // closed by Close; aborts fault delays
	loopStop   chan struct{}
	loopDone   chan struct{}
}

// New builds a Coordinator; it serves nothing until Start, or until its
// Handler is mounted elsewhere.
func New(opts Options) *Coordinator {
	if opts.AdminPassword == "" {
		opts.AdminPassword = defaultAdminPassword
	}
	opts.TokenTTL = orDuration(opts.TokenTTL, defaultTokenTTL)
	if opts.CoordinatorID == "" {
		opts.CoordinatorID = defaultCoordinatorID
	}
	if opts.DefaultInitialShardCount <= 0 {
		opts.DefaultInitialShardCount = defaultInitialShardCount
	}
	if opts.RateLimitPerWindow == 0 {
		opts.RateLimitPerWindow = defaultRateLimit
	}
	opts.RateLimitWindow = orDuration(opts.RateLimitWindow, defaultRateLimitWindow)
	opts.TickInterval = orDuration(opts.TickInterval, defaultTickInterval)
	opts.HeartbeatInterval = orDuration(opts.HeartbeatInterval, defaultHeartbeatInterval)
	opts.MemberLeaseTTL = orDuration(opts.MemberLeaseTTL, defaultMemberLeaseTTL)
	opts.RebalanceTimeout = orDuration(opts.RebalanceTimeout, defaultRebalanceTimeout)
	opts.StaleMemberRetention = orDuration(opts.StaleMemberRetention, defaultStaleRetention)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Coordinator{
		opts:      opts,
		groups:    map[groupKey]*group{},
		failScale: map[string]int{},
		undrained: map[shardKey]map[string]bool{},
		redisKeys: map[string]bool{},
		closing:   make(chan struct{}),
	}
	c.users = effectiveUsers(opts.Users, opts.AdminPassword)
	c.tokenSecret = deriveTokenSecret(opts.TokenSecret, opts.AdminPassword)
	c.limiter.windows = map[string]*rateWindow{}
	c.limiter.manual = opts.RateLimitManualReset
	c.counts.m = map[string]int{}
	c.audit.sink = opts.AuditLog
	return c
}

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func (c *Coordinator) now() time.Time { return c.opts.Now() }

// Handler returns the full HTTP API (everything Start serves).
func (c *Coordinator) Handler() http.Handler { return c }

// Start listens on addr ("127.0.0.1:0" picks a free port), serves the API and
// starts the background loop.
func (c *Coordinator) Start(addr string) error {
	c.life.Lock()
	defer c.life.Unlock()
	if c.closed {
		return errors.New("coordinator: already closed")
	}
	if c.started {
		return errors.New("coordinator: already started")
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr)
	if err != nil {
		return fmt.Errorf("coordinator: listen %s: %w", addr, err)
	}
	c.started = true
	c.addr = ln.Addr().String()
	c.serveLocked(ln)
	c.loopStop = make(chan struct{})
	c.loopDone = make(chan struct{})
	go c.runLoop(c.loopStop, c.loopDone)
	return nil
}

func (c *Coordinator) serveLocked(ln net.Listener) {
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	c.srv, c.serveErr = srv, done
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // always returns ErrServerClosed or a listener error after Close
	}()
}

func (c *Coordinator) runLoop(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(c.opts.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			c.Tick()
		}
	}
}

// URL is the base URL without the /coord/v1 prefix.
func (c *Coordinator) URL() string { return "http://" + c.Addr() }

// Numbering is the numbering the coordinator was started with.
func (c *Coordinator) Numbering() Numbering { return c.opts.Numbering }

// Addr is the listen address chosen by Start; it stays the same across
// Restart.
func (c *Coordinator) Addr() string {
	c.life.Lock()
	defer c.life.Unlock()
	return c.addr
}

// Close stops the listener, drops open connections, stops the loop and waits
// for running handlers. It is safe to call more than once.
func (c *Coordinator) Close() error {
	c.life.Lock()
	if c.closed {
		c.life.Unlock()
		return nil
	}
	c.closed = true
	close(c.closing)
	srv, served := c.srv, c.serveErr
	stop, done := c.loopStop, c.loopDone
	c.life.Unlock()
	var err error
	if srv != nil {
		err = srv.Close()
		<-served
	}
	if stop != nil {
		close(stop)
		<-done
	}
	c.inflight.closeAndWait()
	return err
}

// Restart simulates a server restart: the listener and every open connection
// are closed (in-flight requests lose their responses), nothing answers for
// `down`, then the same address serves again. State survives, as with a
// persistent store; the background loop keeps running throughout.
func (c *Coordinator) Restart(down time.Duration) error {
	return c.RestartWith(func() {
		if down > 0 {
			select {
			case <-time.After(down):
			case <-c.closing:
			}
		}
	})
}

// RestartWith is Restart with the downtime decided by the test: the listener
// and every open connection are closed, then whileDown runs (connections are
// refused meanwhile), then the same address serves again. A test waits in
// whileDown for what must happen while the coordinator is down, such as
// held requests being applied, instead of guessing a duration.
func (c *Coordinator) RestartWith(whileDown func()) error {
	c.life.Lock()
	if !c.started || c.closed || c.restarting {
		c.life.Unlock()
		return errors.New("coordinator: Restart needs a started, open coordinator that is not already restarting")
	}
	c.restarting = true
	srv, served, addr := c.srv, c.serveErr, c.addr
	c.life.Unlock()

	_ = srv.Close()
	<-served
	if whileDown != nil {
		whileDown()
	}

	c.life.Lock()
	defer c.life.Unlock()
	c.restarting = false
	if c.closed {
		return errors.New("coordinator: closed during Restart")
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr)
	if err != nil {
		return fmt.Errorf("coordinator: relisten %s: %w", addr, err)
	}
	c.serveLocked(ln)
	return nil
}

// Users returns the effective users, including the built-in admin when no
// user is configured.
func (c *Coordinator) Users() []User {
	out := make([]User, len(c.users))
	for i, u := range c.users {
		out[i] = User{Username: u.Username, Password: u.Password, Roles: append([]Role(nil), u.Roles...)}
	}
	return out
}

// inflightTracker lets Close wait for handlers without racing new arrivals.
type inflightTracker struct {
	mu     sync.Mutex
	wg     sync.WaitGroup
	closed bool
}

func (t *inflightTracker) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	return true
}

func (t *inflightTracker) leave() { t.wg.Done() }

func (t *inflightTracker) closeAndWait() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.wg.Wait()
}
