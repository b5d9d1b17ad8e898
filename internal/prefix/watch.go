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

// Reader is what a Watcher reads; *client.Client is one.
type Reader interface {
	Groups(ctx context.Context) ([]client.Group, error)
	GetMigration(ctx context.Context, p, g, id string) (*client.Migration, error)
}

// Clock is the time the poll runs on; a zero field is the real clock's.
type Clock struct {
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// A run sends at most one listing a second however many prefixes it waits for.
const (
	DefaultPollInitial = 250 * time.Millisecond
	DefaultPollMax     = time.Second
	pollFactor         = 1.5
)

// Options tune a Watcher; zero values take the defaults.
type Options struct{ Clock Clock }

// Watcher serves every wait of a run from one poll of the groups listing. A
// migration no longer active is read once with GetMigration, which alone tells
// DEPRECATED from ROLLED_BACK. The poll adds no retries over the client's: a
// second layer multiplied both and hid outages for a wait's whole timeout.
type Watcher struct {
	api   Reader
	clock Clock

	mu     sync.Mutex
	waits  map[*Wait]struct{}
	stop   context.CancelFunc
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
	w := &Watcher{api: api, clock: o.Clock, waits: map[*Wait]struct{}{}, kick: make(chan struct{}, 1)}
	if w.clock.Now == nil {
		w.clock.Now = time.Now
	}
	if w.clock.Sleep == nil {
		w.clock.Sleep = client.Sleep
	}
	return w
}

// Waits is how many waits are registered, and idle whether each has taken
// what the rounds delivered (for tests driving a virtual clock).
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

// polling reports whether the poll will issue another round; callers hold w.mu.
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
	// Migration is the group's active migration, or its final state once Finished.
	Migration client.Migration
	// Group is the group's record in the listing; nil when Gone.
	Group *client.Group
	// Finished: the migration ended DEPRECATED or ROLLED_BACK.
	Finished bool
	// Gone: the group is not in the listing (deleted).
	Gone bool
	// Err is the failure of the migration's final read.
	Err error
	// Waited is how long this wait has awaited the migration.
	Waited time.Duration
}

// Ended reports an observation after which nothing more is read for the migration.
func (o Observation) Ended() bool { return o.Finished || o.Gone || o.Err != nil }

// Wait is one waiter's registration for migrations of one stream prefix.
type Wait struct {
	w        *Watcher
	prefix   string
	started  time.Time
	notify   chan struct{}
	deadline time.Time

	mu      sync.Mutex
	awaited map[string]client.Migration
	seen    map[string]Observation // delivered, not yet taken by Next
	err     error
	ended   error // the loop's end, returned by every Next (refused)
	closed  bool
}

// Watch registers the migrations of prefix p a caller waits for; ctx's
// cancellation ends only this wait.
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

// Next returns what the rounds since the last call saw, waiting for the next
// round if none has been delivered.
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

// Forget stops awaiting group g's migration.
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

func (w *Watcher) run(ctx context.Context) {
	interval := DefaultPollInitial
	for {
		if err := w.clock.Sleep(ctx, interval); err != nil {
			w.refused(ctx, err)
			return
		}
		interval = min(time.Duration(float64(interval)*pollFactor), DefaultPollMax)
		select {
		case <-w.kick:
		default:
		}
		waits := w.registered(ctx)
		if waits == nil {
			return
		}
		if !w.round(ctx, waits) {
			// Park instead of sleeping round after round: a virtual clock would otherwise
			// race ahead of a waiter about to register.
			w.setParked(true)
			select {
			case <-ctx.Done():
				w.setParked(false)
				return
			case <-w.kick:
			}
			w.setParked(false)
			interval = DefaultPollInitial
		}
	}
}

// refused ends every wait with the clock's error instead of blocking in Next
// for a round that never comes.
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

// registered: only waits registered before the listing is sent, so none is
// answered from a listing that may predate its scale.
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
	// A round's reads get the latest deadline of the waits it serves.
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
