package prefix

import (
	"context"
	"errors"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// stepClock is a virtual clock the test steps: the poll loop's Sleep blocks
// until the test calls round, so each round happens exactly when the test
// says, however slow the machine.
type stepClock struct {
	mu       sync.Mutex
	now      time.Time
	sleeping chan time.Duration
	wake     chan struct{}
	stopped  chan struct{}  // a Sleep ended by its context (the loop stops)
	pending  *time.Duration // a sleep idle saw begin, not yet ended
}

func newStepClock() *stepClock {
	return &stepClock{now: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC), sleeping: make(chan time.Duration),
		wake: make(chan struct{}), stopped: make(chan struct{}, 16)}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) Sleep(ctx context.Context, d time.Duration) error {
	select {
	case c.sleeping <- d:
	case <-ctx.Done():
		c.stopped <- struct{}{}
		return ctx.Err()
	}
	select {
	case <-c.wake:
		c.mu.Lock()
		c.now = c.now.Add(d)
		c.mu.Unlock()
		return nil
	case <-ctx.Done():
		c.stopped <- struct{}{}
		return ctx.Err()
	}
}

// round ends the loop's current sleep, so its next round starts; it
// returns the interval the loop slept.
func (c *stepClock) round() time.Duration {
	c.idle()
	d := *c.pending
	c.pending = nil
	c.wake <- struct{}{}
	return d
}

// idle waits until the loop has finished its round and sleeps again.
func (c *stepClock) idle() {
	if c.pending == nil {
		d := <-c.sleeping
		c.pending = &d
	}
}

type watchEnv struct {
	c     *coordinator.Coordinator
	api   *client.Client
	clock *stepClock
	w     *Watcher
	srv   *httptest.Server
}

const watchRetries = 3

func newWatchEnv(t *testing.T) *watchEnv {
	t.Helper()
	clock := newStepClock()
	c := coordinator.New(coordinator.Options{AdminPassword: "watch-pass", Now: clock.Now})
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	// The client's own retries are the poll's only ones: short waits keep
	// the test quick; what is asserted is how many requests they make.
	api, err := client.New(client.Config{Endpoint: srv.URL, Username: "admin", Password: "watch-pass", RunID: "watch",
		MaxRetries: watchRetries, RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond, ConnectRetryBudget: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(api, Options{Clock: Clock{Now: clock.Now, Sleep: clock.Sleep}})
	return &watchEnv{c: c, api: api, clock: clock, w: w, srv: srv}
}

// scaled creates groups of prefix p with 4 shards and scales the prefix to
// target; it returns the migrations (group → migration).
func (e *watchEnv) scaled(t *testing.T, p string, target int32, groups ...string) map[string]client.Migration {
	t.Helper()
	ctx := context.Background()
	four := int32(4)
	for _, g := range groups {
		if _, err := e.api.CreateGroup(ctx, p, g, &four, client.Mutation{}); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := e.api.ScaleStream(ctx, p, target, client.Mutation{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]client.Migration{}
	for i, g := range resp.AffectedConsumerGroups {
		out[g] = resp.Migrations[i]
	}
	return out
}

func (e *watchEnv) listings() int { return e.c.RequestCount("GET", coordinator.RouteMonitoringGroups) }
func (e *watchEnv) finalReads() int {
	return e.c.RequestCount("GET", coordinator.RouteMigration)
}

func next(t *testing.T, wt *Wait) map[string]Observation {
	t.Helper()
	seen, err := wt.Next(context.Background())
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return seen
}

// Two prefixes' waits are served by one listing a round; a migration no
// longer active is read once, reported finished with its final state, and
// not read again.
func TestWatcherOneListingServesEveryWait(t *testing.T) {
	e := newWatchEnv(t)
	ctx := context.Background()
	a := e.w.Watch(ctx, "wa", e.scaled(t, "wa", 2, "g0"))
	defer a.Close()
	b := e.w.Watch(ctx, "wb", e.scaled(t, "wb", 2, "g0", "g1"))
	defer b.Close()

	e.clock.round()
	sa, sb := next(t, a), next(t, b)
	if len(sa) != 1 || len(sb) != 2 || e.listings() != 1 || e.finalReads() != 0 {
		t.Fatalf("round 1: %d and %d observations, %d listings, %d migration reads; want 1 and 2, one listing, none", len(sa), len(sb), e.listings(), e.finalReads())
	}
	for g, o := range sb {
		if o.Migration.State != client.MigrationActive || o.Ended() || o.Group == nil || o.Group.ConsumerGroup != g {
			t.Fatalf("round 1, %s: %+v, want the ACTIVE migration and the group's record", g, o)
		}
	}
	// A scale-in without consumers: DRAINING at the first tick, DEPRECATED at the next.
	e.c.Tick()
	e.c.Tick()
	e.clock.round()
	sa, sb = next(t, a), next(t, b)
	for _, seen := range []map[string]Observation{sa, sb} {
		for g, o := range seen {
			if !o.Finished || o.Migration.State != client.MigrationDeprecated || o.Group.ActiveMigration != nil {
				t.Fatalf("round 2, %s: %+v, want finished DEPRECATED", g, o)
			}
		}
	}
	if e.listings() != 2 || e.finalReads() != 3 {
		t.Fatalf("after round 2: %d listings and %d migration reads, want 2 and one per migration (3)", e.listings(), e.finalReads())
	}
	// Nothing is awaited any more: a round sends nothing, and the loop parks.
	e.clock.round()
	parked(t, e)
	if e.listings() != 2 || e.finalReads() != 3 {
		t.Fatalf("a round with nothing awaited sent requests: %d listings, %d migration reads", e.listings(), e.finalReads())
	}
}

// A migration rolled back is reported finished ROLLED_BACK, with the group
// back at its old count; a group with no consumer is EMPTY in its record.
func TestWatcherRolledBack(t *testing.T) {
	e := newWatchEnv(t)
	ctx := context.Background()
	ms := e.scaled(t, "rb", 8, "svc")
	wt := e.w.Watch(ctx, "rb", ms)
	defer wt.Close()
	e.clock.round()
	o := next(t, wt)["svc"]
	if o.Ended() || o.Migration.State != client.MigrationActive || o.Group.State != client.GroupEmpty {
		t.Fatalf("round 1: %+v, want an ACTIVE scale-out of an EMPTY group", o)
	}
	if _, err := e.api.RollbackMigration(ctx, "rb", "svc", ms["svc"].ReshardingID, client.Mutation{}); err != nil {
		t.Fatal(err)
	}
	e.clock.round()
	o = next(t, wt)["svc"]
	if !o.Finished || o.Migration.State != client.MigrationRolledBack || o.Group.ShardCount != 4 || e.finalReads() != 1 {
		t.Fatalf("round 2: %+v after %d migration reads, want finished ROLLED_BACK at 4 shards after one read", o, e.finalReads())
	}
}

// A group missing from the listing is reported gone, without a migration
// read; a group deleted and created again answers the read with a 404.
func TestWatcherGroupGone(t *testing.T) {
	e := newWatchEnv(t)
	ctx := context.Background()
	ms := e.scaled(t, "gone", 8, "a", "b")
	wt := e.w.Watch(ctx, "gone", ms)
	defer wt.Close()
	if _, err := e.api.DeleteGroup(ctx, "gone", "a", true, client.Mutation{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.api.DeleteGroup(ctx, "gone", "b", true, client.Mutation{}); err != nil {
		t.Fatal(err)
	}
	four := int32(4)
	if _, err := e.api.CreateGroup(ctx, "gone", "b", &four, client.Mutation{}); err != nil {
		t.Fatal(err)
	}
	e.clock.round()
	seen := next(t, wt)
	if a := seen["a"]; !a.Gone || a.Group != nil {
		t.Fatalf("deleted group: %+v, want gone", a)
	}
	if b := seen["b"]; !client.IsNotFound(b.Err) || b.Gone || b.Finished {
		t.Fatalf("group created again: %+v, want the migration read's 404", b)
	}
	if e.finalReads() != 1 {
		t.Fatalf("%d migration reads, want one (for the group created again)", e.finalReads())
	}
}

// A listing refused a few times is retried by the client, within the round:
// the wait carries on, and the poll adds no retry of its own.
func TestWatcherListingFailingThenRecovering(t *testing.T) {
	e := newWatchEnv(t)
	ctx := context.Background()
	wt := e.w.Watch(ctx, "flaky", e.scaled(t, "flaky", 8, "svc"))
	defer wt.Close()
	e.c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Times: watchRetries,
		Kind: coordinator.FaultRespond, Status: 503, ErrorCode: client.CodeCoordinatorTerminating, Message: "shutting down"})
	e.clock.round()
	if o := next(t, wt)["svc"]; o.Ended() || o.Migration.State != client.MigrationActive {
		t.Fatalf("after the retried listing: %+v, want the ACTIVE migration", o)
	}
	if e.listings() != watchRetries+1 {
		t.Fatalf("%d listing requests, want the client's %d attempts in one round", e.listings(), watchRetries+1)
	}
	e.clock.round()
	next(t, wt)
	e.clock.idle()
	if e.listings() != watchRetries+2 {
		t.Fatalf("%d listing requests after the next round, want one more", e.listings())
	}
}

// A coordinator unavailable for longer than the client's retries fails the
// round: the wait gets the coordinator's error after exactly the client's
// attempts, once, and nothing is re-sent by the poll. (The provider's waits
// end there; a wait that stays registered is served again once the
// coordinator answers.) Refused connections fail the same way, after the
// connection retry budget.
func TestWatcherUnavailableLongerThanTheBound(t *testing.T) {
	t.Run("503", func(t *testing.T) {
		e := newWatchEnv(t)
		ctx := context.Background()
		wt := e.w.Watch(ctx, "down", e.scaled(t, "down", 8, "svc"))
		defer wt.Close()
		e.c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Times: 1 << 20,
			Kind: coordinator.FaultRespond, Status: 503, ErrorCode: client.CodeCoordinatorTerminating, Message: "shutting down"})
		e.clock.round()
		seen, err := wt.Next(ctx)
		if client.ErrorCode(err) != client.CodeCoordinatorTerminating || seen != nil {
			t.Fatalf("Next = %v, %v; want the coordinator's COORDINATOR_TERMINATING", seen, err)
		}
		e.clock.idle()
		if e.listings() != watchRetries+1 {
			t.Fatalf("%d listing requests, want the client's %d attempts and no more", e.listings(), watchRetries+1)
		}
		e.c.ClearFaults()
		e.clock.round()
		if o := next(t, wt)["svc"]; o.Migration.State != client.MigrationActive {
			t.Fatalf("once the coordinator answers: %+v", o)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		e := newWatchEnv(t)
		ctx := context.Background()
		wt := e.w.Watch(ctx, "refused", e.scaled(t, "refused", 8, "svc"))
		defer wt.Close()
		e.srv.Close()
		e.clock.round()
		var connErr *client.ConnectionError
		if _, err := wt.Next(ctx); !errors.As(err, &connErr) {
			t.Fatalf("Next: %v, want the client's connection error", err)
		}
	})
}

// A wait registered while a round's listing is in flight is not answered
// from that listing (it may predate the wait's scale), but from the next.
func TestWatcherServesOnlyWaitsRegisteredBeforeTheListing(t *testing.T) {
	e := newWatchEnv(t)
	ctx := context.Background()
	first := e.w.Watch(ctx, "early", e.scaled(t, "early", 8, "svc"))
	defer first.Close()
	lateMigrations := e.scaled(t, "late", 8, "svc")
	registered := make(chan *Wait, 1)
	e.c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultDelay,
		OnMatch: func() { registered <- e.w.Watch(ctx, "late", lateMigrations) }})
	e.clock.round()
	next(t, first)
	late := <-registered
	defer late.Close()
	late.mu.Lock()
	delivered := len(late.seen)
	late.mu.Unlock()
	if delivered != 0 {
		t.Fatalf("the wait registered during the listing got %d observations from it", delivered)
	}
	e.clock.round()
	if o := next(t, late)["svc"]; o.Migration.State != client.MigrationActive || e.listings() != 2 {
		t.Fatalf("next round: %+v after %d listings", o, e.listings())
	}
}

// The loop runs only while someone waits: it stops when the last wait
// closes, and the next wait starts it again.
func TestWatcherLoopRunsOnlyWhileWaiting(t *testing.T) {
	e := newWatchEnv(t)
	ctx := context.Background()
	ms := e.scaled(t, "idle", 8, "svc")
	wt := e.w.Watch(ctx, "idle", ms)
	if d := e.clock.round(); d != DefaultPollInitial {
		t.Fatalf("first interval %s, want %s", d, DefaultPollInitial)
	}
	if !polling(e.w) {
		t.Fatal("Polling is false with a wait registered")
	}
	next(t, wt)
	wt.Close()
	if polling(e.w) {
		t.Fatal("Polling is true once the last wait closed")
	}
	<-e.clock.stopped // the loop's next sleep ends with the last wait
	if e.listings() != 1 {
		t.Fatalf("%d listings, want 1", e.listings())
	}
	again := e.w.Watch(ctx, "idle", ms)
	defer again.Close()
	if d := e.clock.round(); d != DefaultPollInitial {
		t.Fatalf("a new loop's first interval %s, want %s", d, DefaultPollInitial)
	}
	next(t, again)
	for i, want := range []time.Duration{375 * time.Millisecond, 562500 * time.Microsecond, 843750 * time.Microsecond, time.Second, time.Second} {
		if d := e.clock.round(); d != want {
			t.Fatalf("interval %d: %s, want %s", i+2, d, want)
		}
		next(t, again)
	}
}

// A clock that refuses to sleep (a test's virtual time ran out) ends the
// loop; the waits still registered get its error from Next instead of
// blocking for a round that never comes (TestScaleWaitPace hung so under a
// heavy load, in make test).
func TestWatcherClockRefusalFailsTheWaits(t *testing.T) {
	e := newWatchEnv(t)
	refused := errors.New("virtual time is up")
	w := NewWatcher(e.api, Options{Clock: Clock{Now: e.clock.Now, Sleep: func(context.Context, time.Duration) error { return refused }}})
	wt := w.Watch(context.Background(), "refuse", e.scaled(t, "refuse", 2, "g1"))
	defer wt.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound for the hang this test guards against
	defer cancel()
	for range 2 { // and again: a waiter that retries does not block either
		if _, err := wt.Next(ctx); !errors.Is(err, refused) {
			t.Fatalf("Next = %v, want the clock's refusal", err)
		}
	}
}

// A loop with nothing awaited (every wait has what it needs and is about
// to close) parks instead of sleeping round after round, so a virtual
// clock does not race ahead while a waiter is about to register
// (TestScaleWaitPace ran its virtual ten minutes out so under a heavy load);
// the next Watch wakes it, and is served first after the initial interval.
func TestWatcherParksWithNothingAwaited(t *testing.T) {
	e := newWatchEnv(t)
	ctx := context.Background()
	done := e.w.Watch(ctx, "parked", nil)
	defer done.Close()
	if d := e.clock.round(); d != DefaultPollInitial {
		t.Fatalf("first interval %s, want %s", d, DefaultPollInitial)
	}
	parked(t, e)
	if polling(e.w) {
		t.Fatal("Polling is true while the loop is parked: no round is coming")
	}
	wt := e.w.Watch(ctx, "parked", e.scaled(t, "parked", 2, "g1"))
	defer wt.Close()
	if !polling(e.w) {
		t.Fatal("Polling is false once a Watch kicked the parked loop")
	}
	// A loop that had slept on would sleep its grown interval here.
	if d := e.clock.round(); d != DefaultPollInitial {
		t.Fatalf("interval after the park %s, want the initial %s", d, DefaultPollInitial)
	}
	next(t, wt)
	if e.listings() != 1 {
		t.Fatalf("%d listings, want 1: the parked loop read nothing", e.listings())
	}
}

// parked waits until the loop parks; a loop that asks to sleep again
// instead (with nothing awaited) fails the test.
func parked(t *testing.T, e *watchEnv) {
	t.Helper()
	for !e.w.Parked() {
		select {
		case d := <-e.clock.sleeping:
			t.Fatalf("the loop slept again (%s) with nothing awaited instead of parking", d)
		default:
			runtime.Gosched()
		}
	}
}

func polling(w *Watcher) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.polling()
}

// Join is served by the poll's next round sent after it asked, never by
// the round in flight when it asked (a group created after that round's
// listing would be missed); it is the round's own listing, so Join costs
// no request. With no round coming (no wait, the loop parks or stops) it
// returns at once, not joined; a round that failed after the client's
// retries fails it too.
func TestWatcherJoinTakesTheNextRound(t *testing.T) {
	e := newWatchEnv(t)
	ctx := context.Background()
	type answer struct {
		groups []client.Group
		joined bool
		err    error
	}
	join := func() chan answer {
		got := make(chan answer, 1)
		go func() { g, ok, err := e.w.Join(ctx); got <- answer{g, ok, err} }()
		for asked := false; !asked; runtime.Gosched() {
			e.w.mu.Lock()
			asked = e.w.next != nil || !e.w.polling()
			e.w.mu.Unlock()
		}
		return got
	}
	if a := <-join(); a.joined || a.err != nil {
		t.Fatalf("Join without a wait: %+v, want not joined", a)
	}

	wt := e.w.Watch(ctx, "join", e.scaled(t, "join", 8, "svc"))
	arrived, gate := make(chan struct{}), make(chan struct{})
	e.c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultDelay,
		OnMatch: func() { close(arrived); <-gate }})
	e.clock.round()
	<-arrived // round 1's listing is in flight
	got := join()
	close(gate)
	next(t, wt)
	four := int32(4)
	if _, err := e.api.CreateGroup(ctx, "join-late", "svc", &four, client.Mutation{}); err != nil {
		t.Fatal(err)
	}
	e.clock.round()
	a := <-got
	if !a.joined || a.err != nil || e.listings() != 2 {
		t.Fatalf("Join: %+v after %d listings, want round 2's listing (2)", a, e.listings())
	}
	late := false
	for _, g := range a.groups {
		late = late || g.StreamPrefix == "join-late"
	}
	if !late {
		t.Fatal("Join was served by the round in flight when it asked: the group created after it is missing")
	}
	next(t, wt)

	e.c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Times: 1 << 20,
		Kind: coordinator.FaultRespond, Status: 503, ErrorCode: client.CodeCoordinatorTerminating, Message: "shutting down"})
	got = join()
	e.clock.round()
	if a := <-got; !a.joined || client.ErrorCode(a.err) != client.CodeCoordinatorTerminating {
		t.Fatalf("Join on a failed round: %+v, want the round's error", a)
	}
	if _, err := wt.Next(ctx); err == nil {
		t.Fatal("the failed round did not fail the wait")
	}
	e.c.ClearFaults()

	got = join() // the last wait closes before the next round
	wt.Close()
	if a := <-got; a.joined || a.err != nil {
		t.Fatalf("Join once the last wait closed: %+v, want not joined", a)
	}
	<-e.clock.stopped

	done := e.w.Watch(ctx, "join", nil) // nothing awaited: the loop parks
	defer done.Close()
	got = join()
	e.clock.round()
	if a := <-got; a.joined || a.err != nil {
		t.Fatalf("Join when the loop parks: %+v, want not joined", a)
	}
	if want := watchRetries + 3; e.listings() != want {
		t.Fatalf("%d listings, want %d: Join sent none of its own", e.listings(), want)
	}
}

// Parked reports a loop parked with nothing awaited.
func (w *Watcher) Parked() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.parked
}
