package coordinator

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func keys(prefix string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, shardKeyName(prefix, i))
	}
	return out
}

// TestProvisioningCreatesKeys: with provisioning on, creates, scales and
// routing make the shard keys; without it nothing is kept.
func TestProvisioningCreatesKeys(t *testing.T) {
	e := newEnv(t, Options{StreamProvisioning: true})
	e.createGroup("orders", "g", 3)
	if got := e.c.RedisKeys("orders"); !slices.Equal(got, keys("orders", 0, 3)) {
		t.Fatalf("keys after create = %v", got)
	}
	e.scaleGroup("orders", "g", 12)
	if got := e.c.RedisKeys("orders"); !slices.Equal(got, keys("orders", 0, 12)) {
		t.Fatalf("keys after scale = %v (want numeric order)", got)
	}
	if got := e.c.RedisKeys("order"); len(got) != 0 {
		t.Fatalf("keys of another prefix = %v", got)
	}

	off := newEnv(t, Options{})
	off.createGroup("orders", "g", 3)
	if got := off.c.RedisKeys("orders"); len(got) != 0 {
		t.Fatalf("provisioning off made keys %v", got)
	}
}

// TestFirstCreateProvisioningFailureLeavesKeys is CONTRACT §4.2: a create
// that fails after shard k deletes its metadata but leaves p:0..k-1, so the
// re-sent create of the prefix's first group is 409
// STREAM_PREFIX_ALREADY_EXISTS until the keys are cleared.
func TestFirstCreateProvisioningFailureLeavesKeys(t *testing.T) {
	e := newEnv(t, Options{StreamProvisioning: true})
	e.c.FailProvisioning(ProvisioningFault{StreamPrefix: "orders", Operation: ProvisionCreate, AfterShards: 3})
	e.do("POST", groupPath("orders", "g"), createBody(8)).wantAPIError(t, 503, "SERVICE_UNAVAILABLE", CodeRedisProvisioningFailed)
	e.do("GET", groupPath("orders", "g"), nil).wantAPIError(t, 404, "NOT_FOUND", CodeGroupNotFound)
	if got := e.c.RedisKeys("orders"); !slices.Equal(got, keys("orders", 0, 3)) {
		t.Fatalf("keys left = %v, want orders:0..2", got)
	}
	e.do("POST", groupPath("orders", "g"), createBody(8)).wantAPIError(t, 409, "CONFLICT", CodeStreamPrefixAlreadyExists)
	e.do("POST", "/coord/v1/streams/orders", createBody(8)).wantAPIError(t, 409, "CONFLICT", CodeStreamPrefixAlreadyExists)

	// The plain key p blocks as well.
	if n := e.c.DeleteRedisKeys(append(keys("orders", 0, 3), "orders:99")...); n != 3 {
		t.Fatalf("deleted %d keys, want 3", n)
	}
	e.c.SetRedisKey("orders")
	e.do("POST", groupPath("orders", "g"), createBody(8)).wantAPIError(t, 409, "CONFLICT", CodeStreamPrefixAlreadyExists)
	e.c.DeleteRedisKeys("orders")

	e.createGroup("orders", "g", 8)
	if got := e.c.RedisKeys("orders"); !slices.Equal(got, keys("orders", 0, 8)) {
		t.Fatalf("keys after the successful create = %v", got)
	}
}

// TestLaterGroupCreateRetryIsSafe: a later group of an existing prefix is not
// checked against the keys, so its create after a provisioning failure
// succeeds when re-sent.
func TestLaterGroupCreateRetryIsSafe(t *testing.T) {
	e := newEnv(t, Options{StreamProvisioning: true})
	e.createGroup("orders", "a", 4)
	e.c.FailProvisioning(ProvisioningFault{ConsumerGroup: "b", AfterShards: 2})
	e.do("POST", groupPath("orders", "b"), createBody(4)).wantAPIError(t, 503, "SERVICE_UNAVAILABLE", CodeRedisProvisioningFailed)
	e.do("GET", groupPath("orders", "b"), nil).wantAPIError(t, 404, "NOT_FOUND", CodeGroupNotFound)
	e.createGroup("orders", "b", 4)
}

// TestScaleProvisioningFailureStaysPreparing is CONTRACT §4.6/§7: the
// migration stays PREPARING with the old count; ticks never move it;
// rollback is 422; any other scale, even to the current count, is 409 and
// says the only way out; the same target resumes it.
func TestScaleProvisioningFailureStaysPreparing(t *testing.T) {
	e := newEnv(t, Options{StreamProvisioning: true})
	e.createGroup("orders", "g", 4)
	e.c.FailProvisioning(ProvisioningFault{StreamPrefix: "orders", Operation: ProvisionScale, AfterShards: 5})
	e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(8)).wantAPIError(t, 503, "SERVICE_UNAVAILABLE", CodeRedisProvisioningFailed)
	g := e.group("orders", "g")
	prep := g.ActiveMigration
	if prep == nil || prep.State != MigrationPreparing || prep.FromShardCount != 4 || prep.ToShardCount != 8 ||
		g.ShardCount != 4 || g.MetadataVersion != 1 {
		t.Fatalf("after failed scale: %+v / %+v", g, prep)
	}
	if got := e.c.RedisKeys("orders"); !slices.Equal(got, keys("orders", 0, 5)) {
		t.Fatalf("keys = %v, want orders:0..4", got)
	}
	e.ticks(50, tick)
	if m := e.migration("orders", "g", prep.ReshardingID); m.State != MigrationPreparing {
		t.Fatalf("the loop moved PREPARING to %s", m.State)
	}
	e.do("POST", groupPath("orders", "g")+"/migrations/"+prep.ReshardingID+"/rollback", auditBody()).
		wantAPIError(t, 422, "UNPROCESSABLE_ENTITY", CodeRollbackNotAllowed)
	for _, target := range []int{4, 6, 0} {
		body := e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(target)).wantAPIError(t, 409, "CONFLICT", CodeActiveMigrationExists)
		if msg := body["message"].(string); !strings.Contains(msg, "own target 8") {
			t.Errorf("409 message %q does not name the only way out", msg)
		}
		e.do("POST", groupPath("orders", "g")+"/scale", scaleBody(target)).wantAPIError(t, 409, "CONFLICT", CodeActiveMigrationExists)
	}
	s := e.scaleStream("orders", 8)
	if m := s.Migrations[0]; m.ReshardingID != prep.ReshardingID || m.State != MigrationActive {
		t.Fatalf("resume = %+v", m)
	}
	if g := e.group("orders", "g"); g.ShardCount != 8 || g.MetadataVersion != 2 {
		t.Fatalf("resumed group = %+v", g)
	}
}

// TestRoutingProvisioningFailure: with provisioning on, producer routing
// re-provisions and can answer 503.
func TestRoutingProvisioningFailure(t *testing.T) {
	e := newEnv(t, Options{StreamProvisioning: true})
	e.createGroup("orders", "g", 2)
	e.c.FailProvisioning(ProvisioningFault{Operation: ProvisionRouting})
	e.do("GET", groupPath("orders", "g")+"/producer-routing", nil).wantAPIError(t, 503, "SERVICE_UNAVAILABLE", CodeRedisProvisioningFailed)
	e.mustStatus(e.do("GET", groupPath("orders", "g")+"/producer-routing", nil), 200)
}

// TestStoreErrorIsGeneric500 is CONTRACT §9: a store failure is Spring's
// generic 500 without errorCode, on GETs and mutations, before or after the
// commit.
func TestStoreErrorIsGeneric500(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 4)
	path := groupPath("orders", "g")

	e.c.InjectFault(Fault{Method: "GET", Route: RouteGroup, Kind: FaultStoreError})
	e.do("GET", path, nil).wantFramework(t, 500, path)
	e.c.InjectFault(Fault{Method: "GET", Route: RouteGroup, Kind: FaultStoreErrorAfterCommit})
	e.do("GET", path, nil).wantFramework(t, 500, path)
	e.group("orders", "g")

	// Not committed: nothing changed, audited as an ERROR.
	e.c.InjectFault(Fault{Method: "POST", Route: RouteStreamScale, Kind: FaultStoreError})
	e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(2)).wantFramework(t, 500, "/coord/v1/streams/orders/scale")
	if g := e.group("orders", "g"); g.ShardCount != 4 || g.ActiveMigration != nil {
		t.Fatalf("uncommitted scale changed the group: %+v", g)
	}
	ev := e.c.AuditEvents()
	if last := ev[len(ev)-1]; last.Action != ActionScaleStream || last.Status != 500 || last.Outcome != OutcomeError {
		t.Fatalf("audit = %+v", last)
	}

	// Committed, then the 500: the scale happened, the audit says so.
	e.c.InjectFault(Fault{Method: "POST", Route: RouteStreamScale, Kind: FaultStoreErrorAfterCommit})
	e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(2)).wantFramework(t, 500, "/coord/v1/streams/orders/scale")
	if g := e.group("orders", "g"); g.ShardCount != 2 || g.ActiveMigration == nil {
		t.Fatalf("committed scale missing: %+v", g)
	}
	ev = e.c.AuditEvents()
	if last := ev[len(ev)-1]; last.Action != ActionScaleStream || last.Status != 202 || last.Outcome != OutcomeSuccess {
		t.Fatalf("audit = %+v", last)
	}

	// A create committed before the 500 exists afterwards; a refused request
	// keeps its own answer.
	e.c.InjectFault(Fault{Method: "POST", Route: RouteGroup, Kind: FaultStoreErrorAfterCommit, Times: 2})
	e.do("POST", groupPath("orders", "h"), createBody(4)).wantFramework(t, 500, groupPath("orders", "h"))
	e.group("orders", "h")
	e.do("POST", groupPath("orders", "h"), createBody(4)).wantAPIError(t, 409, "CONFLICT", CodeGroupAlreadyExists)
}

// TestHeldCreateIsVisibleThenSucceeds models a create queued or still
// provisioning (§4.2): the group is visible while it is held.
func TestHeldCreateIsVisibleThenSucceeds(t *testing.T) {
	e := newEnv(t, Options{StreamProvisioning: true})
	h := e.c.HoldCreate("orders", "g")
	done := make(chan reply, 1)
	go func() { done <- e.do("POST", groupPath("orders", "g"), createBody(4)) }()
	<-h.Reached()
	if g := e.group("orders", "g"); g.MetadataVersion != 1 || g.ShardCount != 4 {
		t.Fatalf("held group = %+v", g)
	}
	e.do("POST", groupPath("orders", "g"), createBody(4)).wantAPIError(t, 409, "CONFLICT", CodeGroupAlreadyExists)
	h.Release()
	if r := <-done; r.status != http.StatusCreated {
		t.Fatalf("released create = %d %s", r.status, r.body)
	}
	if got := e.c.RedisKeys("orders"); !slices.Equal(got, keys("orders", 0, 4)) {
		t.Fatalf("keys = %v", got)
	}
}

// TestHeldCreateFailsAndDisappears: a held create released into a
// provisioning failure deletes the group that was visible.
func TestHeldCreateFailsAndDisappears(t *testing.T) {
	e := newEnv(t, Options{StreamProvisioning: true})
	h := e.c.HoldCreate("orders", "orders")
	done := make(chan reply, 1)
	go func() { done <- e.do("POST", "/coord/v1/streams/orders", createBody(6)) }()
	<-h.Reached()
	e.group("orders", "orders")
	h.FailProvisioning(2)
	(<-done).wantAPIError(t, 503, "SERVICE_UNAVAILABLE", CodeRedisProvisioningFailed)
	e.do("GET", groupPath("orders", "orders"), nil).wantAPIError(t, 404, "NOT_FOUND", CodeGroupNotFound)
	if got := e.c.RedisKeys("orders"); !slices.Equal(got, keys("orders", 0, 2)) {
		t.Fatalf("keys = %v", got)
	}
}

// TestHoldReleasedBeforeArrival: a decision made before the create arrives
// applies when it does.
func TestHoldReleasedBeforeArrival(t *testing.T) {
	e := newEnv(t, Options{})
	h := e.c.HoldCreate("orders", "g")
	h.FailProvisioning(0)
	e.do("POST", groupPath("orders", "g"), createBody(2)).wantAPIError(t, 503, "SERVICE_UNAVAILABLE", CodeRedisProvisioningFailed)
	select {
	case <-h.Reached():
	default:
		t.Fatal("Reached not closed")
	}
	e.createGroup("orders", "g", 2) // the hold is used up
}

// TestActiveMigrationNullAfterFinishAndRollback is CONTRACT §4.6: null in
// both cases; only the migration GET tells them apart.
func TestActiveMigrationNullAfterFinishAndRollback(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "a", 4)
	e.createGroup("orders", "b", 4)
	done := e.scaleGroup("orders", "a", 2)
	e.ticks(3, tick)
	yanked := e.scaleGroup("orders", "b", 8)
	e.mustStatus(e.do("POST", groupPath("orders", "b")+"/migrations/"+yanked.ReshardingID+"/rollback", auditBody()), 202)
	for g, want := range map[string]struct {
		id, state string
		shards    int
	}{"a": {done.ReshardingID, MigrationDeprecated, 2}, "b": {yanked.ReshardingID, MigrationRolledBack, 4}} {
		v := e.group("orders", g)
		if v.ActiveMigration != nil || v.ShardCount != want.shards {
			t.Errorf("%s: activeMigration = %+v, shardCount %d", g, v.ActiveMigration, v.ShardCount)
		}
		if m := e.migration("orders", g, want.id); m.State != want.state {
			t.Errorf("%s: migration state %s, want %s", g, m.State, want.state)
		}
	}
}

// TestRateLimitManualReset: windows outlive their length until
// ResetRateLimits, and refusals are counted.
func TestRateLimitManualReset(t *testing.T) {
	e := newEnv(t, Options{RateLimitEnabled: true, RateLimitPerWindow: 1, RateLimitManualReset: true})
	e.createGroup("orders", "g", 2)
	e.ticks(10, 60*tick) // ten windows' worth of time
	r := e.do("POST", groupPath("orders", "g")+"/scale", scaleBody(2))
	r.wantAPIError(t, 429, "TOO_MANY_REQUESTS", CodeRateLimitExceeded)
	if r.header.Get("Retry-After") != "1" || e.c.RateLimitRefusals() != 1 {
		t.Fatalf("Retry-After %q, refusals %d", r.header.Get("Retry-After"), e.c.RateLimitRefusals())
	}
	e.c.ResetRateLimits()
	e.scaleGroup("orders", "g", 2)
	e.do("POST", groupPath("orders", "g")+"/scale", scaleBody(2)).wantAPIError(t, 429, "TOO_MANY_REQUESTS", CodeRateLimitExceeded)
}

// TestRateLimitResetAfterRefusals: exactly n refusals, then the next
// request opens a new window.
func TestRateLimitResetAfterRefusals(t *testing.T) {
	e := newEnv(t, Options{RateLimitEnabled: true, RateLimitPerWindow: 1, RateLimitManualReset: true})
	e.createGroup("orders", "g", 2) // spends orders:g
	e.c.ResetRateLimitsAfterRefusals(2)
	for range 2 {
		e.do("POST", groupPath("orders", "g")+"/scale", scaleBody(2)).wantAPIError(t, 429, "TOO_MANY_REQUESTS", CodeRateLimitExceeded)
	}
	e.scaleGroup("orders", "g", 2)
	e.do("POST", groupPath("orders", "g")+"/scale", scaleBody(2)).wantAPIError(t, 429, "TOO_MANY_REQUESTS", CodeRateLimitExceeded)
}

// TestRateLimitResetOfOnePrefix leaves other prefixes' windows alone.
func TestRateLimitResetOfOnePrefix(t *testing.T) {
	e := newEnv(t, Options{RateLimitEnabled: true, RateLimitPerWindow: 1, RateLimitManualReset: true})
	e.createGroup("a", "g", 2)
	e.createGroup("a:b", "g", 2)
	e.c.ResetRateLimitsOf("a")
	e.scaleGroup("a", "g", 2)
	e.do("POST", groupPath("a:b", "g")+"/scale", scaleBody(2)).wantAPIError(t, 429, "TOO_MANY_REQUESTS", CodeRateLimitExceeded)
}

// TestFaultOnMatchRunsFirst: OnMatch runs when the fault is taken, before it
// is applied, and may call the coordinator.
func TestFaultOnMatchRunsFirst(t *testing.T) {
	e := newEnv(t, Options{})
	e.c.InjectFault(Fault{Method: "POST", Route: RouteGroup, Kind: FaultRespond, Status: 503, ErrorCode: CodeCoordinatorTerminating,
		OnMatch: func() { e.createGroup("orders", "other", 9) }})
	e.do("POST", groupPath("orders", "g"), createBody(2)).wantAPIError(t, 503, "SERVICE_UNAVAILABLE", CodeCoordinatorTerminating)
	if g := e.group("orders", "other"); g.ShardCount != 9 {
		t.Fatalf("OnMatch create = %+v", g)
	}
}
