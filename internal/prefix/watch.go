package prefix

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Reader is what a Watcher reads: the groups listing (GET
// /monitoring/groups, CONTRACT §5) and, once, the final state of a
// migration that is no longer active (§4.8). *client.Client is one.
type Reader interface {
	Groups(ctx context.Context) ([]client.Group, error)
	GetMigration(ctx context.Context, p, g, id string) (*client.Migration, error)
}

// Clock is the time the poll runs on; a zero field is the real clock's.
// Tests drive a virtual one.
type Clock struct {
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// The poll's schedule: the first listing 250 ms after a wait starts the
// loop, then intervals growing by half up to 1 s. A run sends at most one
// listing a second however many prefixes it waits for, and an apply returns
// within a second of its last migration completing.
const (
	DefaultPollInitial = 250 * time.Millisecond
	DefaultPollMax     = time.Second
	pollFactor         = 1.5
)

// Options tune a Watcher; zero values take the defaults.
type Options struct {
	Clock        Clock
	Initial, Max time.Duration
}

// Watcher serves every wait of a run from one poll: each round reads the
// groups listing once and answers every wait registered before it from
// that one answer. A migration no longer active in the listing is read once
// with GetMigration, which alone tells DEPRECATED from ROLLED_BACK
// (CONTRACT §4.6: activeMigration becomes null either way); a group missing
// from the listing is reported as gone, and the caller decides what that
// means. The loop runs only while a wait is registered.
//
// One retry layer: the poll's reads are the client's calls, with the
// client's retries (its retry table, max_retries, retry_wait_min/max,
// Retry-After and the connection retry budget), and the poll adds none. A
// listing that fails after those retries fails the round for every wait it
// was to serve (Wait.Next returns the error); the provider's waits end
// there, and the next apply resumes them. So a wait rides out an
// unavailable coordinator for exactly as long as any other read of the
// provider does: with the defaults (max_retries 10, waits of 1 s doubling
// to 30 s, jittered), about 1.5 to 3 minutes of 503s or 500s, and 3 s
// (connect_retry_budget) of refused connections, the bound the client
// gives a restart. Why that bound and not the wait's whole timeout: a
// second layer over the client's multiplied both (every GET answered 503
// was sent 55 times over a 10-minute timeout), and a wait that hides an
// outage for its whole timeout reports it only when it has nothing left to
// do; the user who wants a longer ride sets max_retries and retry_wait_max,
// which govern every read alike.
type Watcher struct {
	api     Reader
	clock   Clock
	initial time.Duration
	max     time.Duration

	mu    sync.Mutex
	waits map[*Wait]struct{}
	// stop ends the running loop; nil when no loop runs.
	stop context.CancelFunc
	// kick wakes a loop parked with nothing awaited (Watch sends it).
	kick   chan struct{}
	parked bool
	// next is the listing the next round shares with Join's callers; a
	// round takes it just before it sends.
	next *sharedListing
}

type sharedListing struct {
	done   chan struct{}
	groups []client.Group
	err    error
	joined bool
}

// NewWatcher builds the run's Watcher; it sends nothing until a wait.
func NewWatcher(api Reader, o Options) *Watcher {
	w := &Watcher{api: api, clock: o.Clock, initial: o.Initial, max: o.Max, waits: map[*Wait]struct{}{}, kick: make(chan struct{}, 1)}
	if w.clock.Now == nil {
		w.clock.Now = time.Now
	}
	if w.clock.Sleep == nil {
		w.clock.Sleep = client.Sleep
	}
	if w.initial <= 0 {
		w.initial = DefaultPollInitial
	}
	if w.max <= 0 {
		w.max = DefaultPollMax
	}
	w.max = max(w.max, w.initial)
	return w
}

// Waits is how many waits are registered, and idle whether every one of
// them has taken what the rounds delivered. A test that drives the poll with
// a virtual clock holds each round until both hold, so a waiter a busy
// machine schedules late sees every round, as it would in real time.
func (w *Watcher) Waits() (n int, idle bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	idle = true
	for wt := range w.waits {
		wt.mu.Lock()
		if len(wt.seen) > 0 || wt.err != nil {
			idle = false
		}
		wt.mu.Unlock()
	}
	return len(w.waits), idle
}

// Parked reports a loop parked with nothing awaited (a test's check).
func (w *Watcher) Parked() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.parked
}

// polling reports whether the poll will issue another round: a loop runs,
// with waits registered, and is not parked (or a Watch has kicked it).
// Callers hold w.mu.
func (w *Watcher) polling() bool {
	return w.stop != nil && len(w.waits) > 0 && (!w.parked || len(w.kick) > 0)
}

// Join returns the groups listing of the poll's next round: one sent after
// the call, never one sent before it (a group created in between would be
// missed). joined is false when no round is coming (no wait, or the loop
// parks or stops) or the round was stopped: the caller lists for itself.
// A round that failed after the client's retries fails the caller too:
// listing again would ride out the same outage twice. The answer is
// shared: callers must not modify it.
func (w *Watcher) Join(ctx context.Context) (groups []client.Group, joined bool, err error) {
	w.mu.Lock()
	if !w.polling() {
		w.mu.Unlock()
		return nil, false, nil
	}
	if w.next == nil {
		w.next = &sharedListing{done: make(chan struct{})}
	}
	l := w.next
	w.mu.Unlock()
	select {
	case <-l.done:
		return l.groups, l.joined, l.err
	case <-ctx.Done():
		return nil, true, ctx.Err()
	}
}

// releaseLocked tells Join's callers that no round is coming.
func (w *Watcher) releaseLocked() {
	if w.next != nil {
		close(w.next.done)
		w.next = nil
	}
}

func (w *Watcher) setParked(v bool) {
	w.mu.Lock()
	w.parked = v
	if v {
		w.releaseLocked()
	}
	w.mu.Unlock()
}

// Observation is what one round saw of one awaited migration.
type Observation struct {
	// Migration is the migration as of this round: the group's active
	// migration, or its final state once Finished.
	Migration client.Migration
	// Group is the group's record in the listing; nil when Gone.
	Group *client.Group
	// Finished: the migration is no longer the group's active one and its
	// final state is DEPRECATED or ROLLED_BACK (CONTRACT §7 "Finished").
	Finished bool
	// Gone: the group is not in the listing (deleted).
	Gone bool
	// Err is the failure of the migration's final read (a 404 when the
	// group was deleted and created again: the new one does not know it).
	Err error
	// Waited is how long this wait has awaited the migration.
	Waited time.Duration
}

// Ended reports an observation after which the Watcher reads nothing more
// for the migration.
func (o Observation) Ended() bool { return o.Finished || o.Gone || o.Err != nil }

// Wait is one waiter's registration: the migrations (group → migration) of
// one stream prefix it awaits.
type Wait struct {
	w       *Watcher
	prefix  string
	started time.Time
	notify  chan struct{}
	// deadline is the waiting caller's (its resource timeout); zero when it
	// has none, and then the client's read_timeout bounds each read.
	deadline time.Time

	mu      sync.Mutex
	awaited map[string]client.Migration
	seen    map[string]Observation // delivered, not yet taken by Next
	err     error
	ended   error // the loop's end, returned by every Next (refused)
	closed  bool
}

// Watch registers the migrations of prefix p a caller waits for; the
// caller takes the rounds with Next and ends with Close. ctx gives the
// poll's reads their logger; its cancellation ends only this wait.
func (w *Watcher) Watch(ctx context.Context, p string, migrations map[string]client.Migration) *Wait {
	wt := &Wait{w: w, prefix: p, started: w.clock.Now(), notify: make(chan struct{}, 1),
		awaited: map[string]client.Migration{}, seen: map[string]Observation{}}
	wt.deadline, _ = ctx.Deadline()
	for g, m := range migrations {
		wt.awaited[g] = m
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waits[wt] = struct{}{}
	select {
	case w.kick <- struct{}{}:
	default:
	}
	w.parked = false // a parked loop is woken by the kick
	if w.stop == nil {
		loop, stop := context.WithCancel(context.WithoutCancel(ctx))
		w.stop = stop
		go w.run(loop)
	}
	return wt
}

// Next returns what the rounds since the last call saw of the migrations
// still awaited (group → observation), waiting for the next round if none
// has been delivered; a failed listing is returned as the error.
func (wt *Wait) Next(ctx context.Context) (map[string]Observation, error) {
	for {
		wt.mu.Lock()
		if wt.ended != nil {
			defer wt.mu.Unlock()
			return nil, wt.ended
		}
		seen, err := wt.seen, wt.err
		if len(seen) > 0 || err != nil {
			wt.seen, wt.err = map[string]Observation{}, nil
			wt.mu.Unlock()
			if err != nil {
				return nil, err
			}
			return seen, nil
		}
		wt.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-wt.notify:
		}
	}
}

// Forget stops awaiting group g's migration (the caller has what it needs).
func (wt *Wait) Forget(g string) {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	delete(wt.awaited, g)
	delete(wt.seen, g)
}

// Close ends the wait; the loop stops when no wait remains.
func (wt *Wait) Close() {
	wt.mu.Lock()
	wt.closed = true
	wt.mu.Unlock()
	w := wt.w
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.waits, wt)
	if len(w.waits) == 0 && w.stop != nil {
		w.stop()
		w.stop = nil
		w.releaseLocked()
	}
}

// run is the poll loop: it sleeps, then serves one round, while its
// context lives.
func (w *Watcher) run(ctx context.Context) {
	interval := w.initial
	for {
		if err := w.clock.Sleep(ctx, interval); err != nil {
			w.refused(ctx, err)
			return
		}
		interval = min(time.Duration(float64(interval)*pollFactor), w.max)
		// A Watch from here on kicks a park that follows this round;
		// one from before is served by it (drained).
		select {
		case <-w.kick:
		default:
		}
		waits := w.registered(ctx)
		if waits == nil {
			return
		}
		if !w.round(ctx, waits) {
			// Nothing awaited: the registered waits have all they need
			// and are about to close. The loop parks until a new wait
			// (or its end) instead of sleeping round after round (a
			// virtual clock would otherwise race ahead while a waiter
			// about to register is not yet scheduled), and serves the
			// new wait as a new loop would: first after the initial
			// interval.
			w.setParked(true)
			select {
			case <-ctx.Done():
				w.setParked(false)
				return
			case <-w.kick:
			}
			w.setParked(false)
			interval = w.initial
		}
	}
}

// refused ends a loop whose clock refused to sleep (a test's virtual time
// ran out) while it was still running: every wait still registered ends
// with the clock's error, for good (Next returns it on every call), instead
// of blocking in Next for a round that never comes; a later Watch starts a
// new loop. A loop already stopped (its context cancelled) has nothing to
// tell.
func (w *Watcher) refused(ctx context.Context, err error) {
	w.mu.Lock()
	if ctx.Err() != nil {
		w.mu.Unlock()
		return
	}
	w.stop()
	w.stop = nil
	w.releaseLocked()
	waits := make([]*Wait, 0, len(w.waits))
	for wt := range w.waits {
		waits = append(waits, wt)
	}
	w.mu.Unlock()
	for _, wt := range waits {
		wt.mu.Lock()
		wt.ended = fmt.Errorf("waiting for migrations: %w", err)
		wt.mu.Unlock()
		wt.wake()
	}
}

// registered are the waits a round starting now serves: those registered
// before its listing is sent, so none is answered from a listing that may
// predate its scale. Nil when the loop has been stopped.
func (w *Watcher) registered(ctx context.Context) []*Wait {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ctx.Err() != nil {
		return nil
	}
	waits := make([]*Wait, 0, len(w.waits))
	for wt := range w.waits {
		waits = append(waits, wt)
	}
	return waits
}

// round reads the listing once and answers every wait from it; false when
// no registered wait awaits anything (nothing is read).
func (w *Watcher) round(ctx context.Context, waits []*Wait) bool {
	awaited := make([]map[string]client.Migration, len(waits))
	n := 0
	for i, wt := range waits {
		awaited[i] = wt.snapshot()
		n += len(awaited[i])
	}
	if n == 0 {
		return false
	}
	// The loop's context is detached from every caller; a round's reads get
	// the latest deadline of the waits it serves, so inside resource
	// timeouts they are bound by those, and read_timeout applies only when
	// some wait has none.
	if d, ok := latestDeadline(waits); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	w.mu.Lock()
	shared := w.next
	w.next = nil
	w.mu.Unlock()
	groups, err := w.api.Groups(ctx)
	if shared != nil {
		// A round ended by its waits (stopped, or their deadline) is not
		// a joiner's failure.
		shared.groups, shared.err, shared.joined = groups, err, ctx.Err() == nil
		close(shared.done)
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	if err != nil {
		tflog.Debug(ctx, "groups listing failed; every wait of the round ends with the error", map[string]any{"error": err.Error(), "waits": len(waits)})
		for _, wt := range waits {
			wt.fail(fmt.Errorf("reading the groups listing while waiting for migrations: %w", err))
		}
		return true
	}
	index := make(map[[2]string]*client.Group, len(groups))
	for i := range groups {
		index[[2]string{groups[i].StreamPrefix, groups[i].ConsumerGroup}] = &groups[i]
	}
	now := w.clock.Now()
	for i, wt := range waits {
		seen := make(map[string]Observation, len(awaited[i]))
		for _, g := range sortedNames(awaited[i]) {
			seen[g] = w.observe(ctx, wt.prefix, g, awaited[i][g], index[[2]string{wt.prefix, g}])
			o := seen[g]
			o.Waited = now.Sub(wt.started)
			seen[g] = o
		}
		wt.deliver(seen)
	}
	return true
}

// observe reads one awaited migration from the listing's record of its
// group, and reads its final state once it is no longer active.
func (w *Watcher) observe(ctx context.Context, p, g string, m client.Migration, rec *client.Group) Observation {
	if rec == nil {
		return Observation{Migration: m, Gone: true}
	}
	group := *rec
	if am := group.ActiveMigration; am != nil && am.ReshardingID == m.ReshardingID {
		return Observation{Migration: *am, Group: &group}
	}
	final, err := w.api.GetMigration(ctx, p, g, m.ReshardingID)
	if err != nil {
		return Observation{Migration: m, Group: &group, Err: err}
	}
	return Observation{Migration: *final, Group: &group, Finished: final.Finished()}
}

func (wt *Wait) snapshot() map[string]client.Migration {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	out := make(map[string]client.Migration, len(wt.awaited))
	for g, m := range wt.awaited {
		out[g] = m
	}
	return out
}

// deliver hands a round's observations to the wait; an ended one is no
// longer awaited, so its final read is sent once.
func (wt *Wait) deliver(seen map[string]Observation) {
	wt.mu.Lock()
	for g, o := range seen {
		if _, still := wt.awaited[g]; !still || wt.closed {
			continue
		}
		if o.Ended() {
			delete(wt.awaited, g)
		} else {
			wt.awaited[g] = o.Migration
		}
		wt.seen[g] = o
	}
	wt.mu.Unlock()
	wt.wake()
}

func (wt *Wait) fail(err error) {
	wt.mu.Lock()
	wt.err = err
	wt.mu.Unlock()
	wt.wake()
}

func (wt *Wait) wake() {
	select {
	case wt.notify <- struct{}{}:
	default:
	}
}

func sortedNames(m map[string]client.Migration) []string {
	names := make([]string, 0, len(m))
	for g := range m {
		names = append(names, g)
	}
	sort.Strings(names)
	return names
}

// latestDeadline is the latest deadline of waits, or false when one of them
// has none.
func latestDeadline(waits []*Wait) (time.Time, bool) {
	var latest time.Time
	for _, wt := range waits {
		if wt.deadline.IsZero() {
			return time.Time{}, false
		}
		if wt.deadline.After(latest) {
			latest = wt.deadline
		}
	}
	return latest, !latest.IsZero()
}
