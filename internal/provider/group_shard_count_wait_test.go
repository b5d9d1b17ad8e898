package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// virtualTime is the clock of TestScaleWaitPace: the poll's sleeps advance
// it, and the coordinator's loop ticks once per virtual second from
// tickFrom on, so no test waits for real time.
type virtualTime struct {
	mu       sync.Mutex
	base     time.Time
	elapsed  time.Duration
	tickFrom time.Duration
	limit    time.Duration
	tick     func()
}

func (v *virtualTime) now() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.base.Add(v.elapsed)
}

func (v *virtualTime) since() time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.elapsed
}

var errVirtualTimeUp = errors.New("virtual time limit reached")

func (v *virtualTime) sleep(ctx context.Context, d time.Duration) error {
	v.mu.Lock()
	before := v.elapsed
	v.elapsed += d
	after := v.elapsed
	v.mu.Unlock()
	for s := before/time.Second + 1; s <= after/time.Second; s++ {
		if s*time.Second >= v.tickFrom {
			v.tick()
		}
	}
	if after > v.limit {
		return errVirtualTimeUp
	}
	return ctx.Err()
}

// TestScaleWaitPace: the waits of a run share one poll. Two prefixes (one
// group, and three) wait at once through one Watcher: while they wait, the
// run sends groups listings no closer together than the poll's first
// interval and at most pollPaceMax (3) in any second, whatever the number of
// prefixes and groups, plus exactly one final read per migration and, since
// the migrations linger past violationsEvery (nothing completes before
// tickFrom), one invariant-violation read per migration, none before
// violationsEvery; no other request (no per-group GETs, no members reads);
// and both waits end once the coordinator completes the change.
func TestScaleWaitPace(t *testing.T) {
	// The Watcher's schedule (250 ms, growing by half) lists at most three
	// times in any second.
	const pollPaceMax = 3
	ctx := context.Background()
	vt := &virtualTime{base: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), tickFrom: violationsEvery + 6*time.Second, limit: 10 * time.Minute}
	c := coordinator.New(coordinator.Options{AdminPassword: "pace-pass", Now: vt.now})
	vt.tick = c.Tick

	type sent struct {
		at  time.Duration
		key string
	}
	var mu sync.Mutex
	recording := false
	var log []sent
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if recording {
			key := r.Method + " " + r.URL.Path
			if strings.Contains(r.URL.Path, "/migrations/") {
				key = "GET migration"
			}
			if strings.HasSuffix(r.URL.Path, "/assignments") {
				key = "GET assignments"
			}
			log = append(log, sent{vt.since(), key})
		}
		mu.Unlock()
		c.ServeHTTP(w, r)
	}))
	defer srv.Close()
	api, err := client.New(client.Config{Endpoint: srv.URL, Username: "admin", Password: "pace-pass"})
	if err != nil {
		t.Fatal(err)
	}
	// The poll's virtual time starts once both waits are registered, and
	// each round waits until both have taken the last one: a waiter a busy
	// machine schedules late would otherwise find its migrations done
	// before it saw them under way.
	var watch *prefix.Watcher
	var started atomic.Bool
	pollSleep := func(ctx context.Context, d time.Duration) error {
		for {
			n, idle := watch.Waits()
			if idle && (started.Load() || n == 2) || ctx.Err() != nil {
				break
			}
			runtime.Gosched()
		}
		started.Store(true)
		return vt.sleep(ctx, d)
	}
	watch = prefix.NewWatcher(api, prefix.Options{Clock: prefix.Clock{Now: vt.now, Sleep: pollSleep}})

	four := int32(4)
	var scalers []*scaler
	var outs []*scaleOutcome
	var diags []*diag.Diagnostics
	migrations := 0
	for p, groups := range map[string]int{"pace-a": 1, "pace-b": 3} {
		for i := range groups {
			if _, err := api.CreateGroup(ctx, p, fmt.Sprintf("g%d", i), &four, client.Mutation{}); err != nil {
				t.Fatal(err)
			}
		}
		d := &diag.Diagnostics{}
		s := testScaler(api, p, "g0", 2, d)
		s.watch = watch
		out := s.start(ctx)
		if out == nil || d.HasError() {
			t.Fatalf("scale of %s did not start: %v", p, *d)
		}
		if len(out.migrations) != groups {
			t.Fatalf("%s: tracking %d migrations, want one per group (%d)", p, len(out.migrations), groups)
		}
		migrations += groups
		scalers, outs, diags = append(scalers, s), append(outs, out), append(diags, d)
	}

	mu.Lock()
	recording = true
	mu.Unlock()
	finished := make([]bool, len(scalers))
	var wg sync.WaitGroup
	for i, s := range scalers {
		wg.Add(1)
		go func() { defer wg.Done(); finished[i] = s.wait(ctx, outs[i]) }()
	}
	wg.Wait()
	mu.Lock()
	recording = false
	mu.Unlock()

	for i, s := range scalers {
		if !finished[i] || diags[i].HasError() {
			t.Fatalf("wait of %s did not finish: finished=%v %v", s.p, finished[i], *diags[i])
		}
		if outs[i].state != client.MigrationDeprecated {
			t.Fatalf("%s: migrations ended %s, want %s", s.p, outs[i].state, client.MigrationDeprecated)
		}
	}
	var listings []time.Duration
	finals, violationReads := 0, 0
	for _, r := range log {
		switch r.key {
		case "GET assignments":
			violationReads++
			if r.at < violationsEvery {
				t.Errorf("an invariant-violation read at %s: none is due before a migration lingered %s", r.at, violationsEvery)
			}
		case "GET " + coordinator.RouteMonitoringGroups:
			listings = append(listings, r.at)
		case "GET migration":
			finals++
		default:
			t.Errorf("the wait sent %s at %s: only listings, final migration reads and invariant-violation reads belong to it", r.key, r.at)
		}
	}
	if violationReads != migrations {
		t.Errorf("%d invariant-violation reads, want one per migration (%d): each lingered past %s, and none past twice that", violationReads, migrations, violationsEvery)
	}
	if finals != migrations {
		t.Errorf("%d final migration reads, want one per migration (%d)", finals, migrations)
	}
	// Nothing completes before tickFrom: the waits polled for several
	// seconds, so the listings show the poll's pace.
	if len(listings) < 2*pollPaceMax || listings[len(listings)-1] < vt.tickFrom {
		t.Fatalf("only %d listings, the last at %s", len(listings), listings[len(listings)-1])
	}
	busiest := 0
	for i := range listings {
		if i > 0 && listings[i]-listings[i-1] < prefix.DefaultPollInitial {
			t.Fatalf("listings at %s and %s, closer than the poll's first interval (all: %v)", listings[i-1], listings[i], listings)
		}
		n := 0
		for j := i; j < len(listings) && listings[j]-listings[i] < time.Second; j++ {
			n++
		}
		busiest = max(busiest, n)
		if n > pollPaceMax {
			t.Fatalf("%d listings within one second from %s (all: %v)", n, listings[i], listings)
		}
	}
	t.Logf("%d listings over %s of virtual time (at most %d in any second) and %d final reads served %d migrations of 2 prefixes",
		len(listings), listings[len(listings)-1]-listings[0], busiest, finals, migrations)
}

// An invariant-violation read is due only once a migration lingered
// violationsEvery, then once in each violationsEvery after.
func TestViolationsCheckDue(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range []struct {
		waited time.Duration
		due    bool
	}{
		{0, false}, {violationsEvery - time.Millisecond, false},
		{violationsEvery, true}, {violationsEvery + time.Second, false},
		{2*violationsEvery - time.Millisecond, false}, {2 * violationsEvery, true}, {3*violationsEvery + time.Second, true},
	} {
		if got := violationsCheckDue(c.waited, seen, "svc"); got != c.due {
			t.Errorf("awaited %s: due %v, want %v", c.waited, got, c.due)
		}
	}
	if !violationsCheckDue(violationsEvery, seen, "other") {
		t.Error("another group's migration has its own schedule")
	}
}

// A revert's wait is for its unfinished migrations alone; it drops the
// groups it stopped tracking because this apply deleted them
// (untrackDeleted), so migration_ids never lists a group whose migration
// ended with it, and the revert's finished rollback keeps its ROLLED_BACK
// state. (Adversarial review, stop 39: the wait's outcome kept the deleted
// group.)
func TestScaleWaitDropsWhatItUntracked(t *testing.T) {
	m := func(id string, state client.MigrationState) client.Migration {
		return client.Migration{ReshardingID: id, State: state, FromShardCount: 4, ToShardCount: 3}
	}
	o := newScaleOutcome()
	o.track("a", m("r-a", client.MigrationRolledBack))
	o.track("b", m("r-b", client.MigrationActive))
	o.track("c", m("r-c", client.MigrationActive))
	o.state = client.MigrationRolledBack
	// b has finished; c is gone, deleted by this apply; a is never read.
	reader := &fakeWaitReader{groups: []client.Group{{StreamPrefix: "p", ConsumerGroup: "b", ShardCount: 3}},
		final: map[string]client.Migration{"r-b": m("r-b", client.MigrationDeprecated)}}
	var d diag.Diagnostics
	s := &scaler{providerData: &providerData{watch: prefix.NewWatcher(reader, prefix.Options{})}, p: "p", g: "b", target: 3, diags: &d}
	s.plans.note("p", "c", func(rg *runGroup) { rg.deleted = &client.Group{} })
	if !s.wait(context.Background(), o) || d.HasError() {
		t.Fatalf("the wait did not settle: %v", d)
	}
	if _, ok := o.migrations["c"]; ok || o.waitingForConsumer["c"] {
		t.Errorf("the group the wait untracked is still tracked: %+v, waiting for a consumer %v", o.migrations, o.waitingForConsumer)
	}
	if o.migrations["a"].State != client.MigrationRolledBack || o.migrations["b"].State != client.MigrationDeprecated {
		t.Errorf("after the wait: %+v, want a ROLLED_BACK and b DEPRECATED", o.migrations)
	}
	if o.state != client.MigrationRolledBack {
		t.Errorf("state %s, want the revert's ROLLED_BACK", o.state)
	}
	if reader.reads["r-a"] {
		t.Error("the wait read the finished rollback")
	}
}

type fakeWaitReader struct {
	mu     sync.Mutex
	groups []client.Group
	final  map[string]client.Migration
	reads  map[string]bool
}

func (f *fakeWaitReader) Groups(context.Context) ([]client.Group, error) { return f.groups, nil }

func (f *fakeWaitReader) GetMigration(_ context.Context, _, _, id string) (*client.Migration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reads == nil {
		f.reads = map[string]bool{}
	}
	f.reads[id] = true
	m := f.final[id]
	return &m, nil
}
