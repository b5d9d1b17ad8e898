package coordinator

import (
	"strings"
	"testing"
	"time"
)

const tick = time.Second

// TestNoopScale: a scale to the current count is 202 with a "noop"
// migration that is never stored and changes nothing.
func TestNoopScale(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 3)
	m := e.scaleGroup("orders", "g", 3)
	if m.ReshardingID != NoopReshardingID || m.FromShardCount != 3 || m.ToShardCount != 3 || m.State != MigrationDeprecated {
		t.Fatalf("noop = %+v", m)
	}
	s := e.scaleStream("orders", 3)
	if s.Migrations[0].ReshardingID != NoopReshardingID || s.TargetShardCount != 3 {
		t.Fatalf("stream noop = %+v", s)
	}
	e.do("GET", groupPath("orders", "g")+"/migrations/noop", nil).wantAPIError(t, 404, "NOT_FOUND", CodeMigrationNotFound)
	if g := e.group("orders", "g"); g.MetadataVersion != 1 || g.GroupEpoch != 1 || g.ActiveMigration != nil {
		t.Fatalf("noop changed the group: %+v", g)
	}
	var hist migrationsView
	e.mustStatus(e.do("GET", "/coord/v1/monitoring/streams/orders/groups/g/migrations", nil), 200).decode(t, &hist)
	if len(hist.Migrations) != 0 || hist.ActiveReshardingID != nil {
		t.Fatalf("history = %+v", hist)
	}
}

// TestScaleOutWithoutMembersStaysActive: routing switches inside the 202,
// and with no live member a scale-out never leaves ACTIVE; every further
// scale, even to the same or current count, is 409.
func TestScaleOutWithoutMembersStaysActive(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 2)
	m := e.scaleGroup("orders", "g", 4)
	if !strings.HasPrefix(m.ReshardingID, "reshard-") || len(m.ReshardingID) != len("reshard-")+36 ||
		m.State != MigrationActive || m.FromShardCount != 2 || m.ToShardCount != 4 {
		t.Fatalf("migration = %+v", m)
	}
	g := e.group("orders", "g")
	if g.ShardCount != 4 || g.MetadataVersion != 2 || g.GroupEpoch != 2 || g.AssignmentEpoch != 2 || g.ActiveMigration.ReshardingID != m.ReshardingID {
		t.Fatalf("group after scale = %+v", g)
	}
	var routing routingView
	e.mustStatus(e.do("GET", groupPath("orders", "g")+"/producer-routing", nil), 200).decode(t, &routing)
	if routing.ShardCount != 4 || len(routing.Shards) != 4 || routing.MetadataVersion != 2 {
		t.Fatalf("routing = %+v", routing)
	}
	e.ticks(100, tick)
	if got := e.migration("orders", "g", m.ReshardingID); got.State != MigrationActive {
		t.Fatalf("scale-out without members = %s", got.State)
	}
	for _, target := range []int{4, 2, 8} {
		e.do("POST", groupPath("orders", "g")+"/scale", scaleBody(target)).wantAPIError(t, 409, "CONFLICT", CodeActiveMigrationExists)
		e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(target)).wantAPIError(t, 409, "CONFLICT", CodeActiveMigrationExists)
	}
}

// TestScaleInWithoutMembersCompletes: the first tick moves to DRAINING,
// the next to DEPRECATED, which clears activeMigration.
func TestScaleInWithoutMembersCompletes(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 4)
	m := e.scaleGroup("orders", "g", 2)
	e.ticks(1, tick)
	if got := e.migration("orders", "g", m.ReshardingID); got.State != MigrationDraining {
		t.Fatalf("after 1 tick = %s", got.State)
	}
	e.ticks(1, tick)
	got := e.migration("orders", "g", m.ReshardingID)
	if got.State != MigrationDeprecated || !time.Time(got.UpdatedAt).After(time.Time(got.CreatedAt)) {
		t.Fatalf("after 2 ticks = %+v", got)
	}
	if g := e.group("orders", "g"); g.ActiveMigration != nil || g.ShardCount != 2 {
		t.Fatalf("group = %+v", g)
	}
	// Finished: scaling is allowed again.
	e.scaleGroup("orders", "g", 3)
}

// TestUndrainedShardBlocksScaleIn: backlog of any consumer group on a
// removed key keeps DRAINING, for every group of the prefix removing it.
func TestUndrainedShardBlocksScaleIn(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "a", 4)
	e.createGroup("orders", "b", 4)
	e.c.SetUndrainedShard("orders", "unmanaged", 3, true)
	s := e.scaleStream("orders", 2)
	e.ticks(10, tick)
	for i, name := range []string{"a", "b"} {
		if got := e.migration("orders", name, s.Migrations[i].ReshardingID); got.State != MigrationDraining {
			t.Fatalf("%s with undrained orders:3 = %s", name, got.State)
		}
	}
	e.c.SetUndrainedShard("orders", "unmanaged", 3, false)
	e.ticks(1, tick)
	for _, name := range []string{"a", "b"} {
		if g := e.group("orders", name); g.ActiveMigration != nil {
			t.Fatalf("%s still has %+v", name, g.ActiveMigration)
		}
	}
	// A shard that stays (index < target) does not block.
	e.c.SetUndrainedShard("orders", "a", 0, true)
	m := e.scaleGroup("orders", "a", 1)
	e.ticks(2, tick)
	if got := e.migration("orders", "a", m.ReshardingID); got.State != MigrationDeprecated {
		t.Fatalf("kept shard blocked the scale-in: %s", got.State)
	}
}

func TestScaleToZeroAndBack(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 3)
	m := e.scaleGroup("orders", "g", 0)
	var routing routingView
	raw := e.mustStatus(e.do("GET", groupPath("orders", "g")+"/producer-routing", nil), 200)
	raw.decode(t, &routing)
	if routing.ShardCount != 0 || routing.Shards == nil || len(routing.Shards) != 0 || !strings.Contains(string(raw.body), `"shards":[]`) {
		t.Fatalf("routing at 0 = %s", raw.body)
	}
	e.ticks(2, tick)
	if got := e.migration("orders", "g", m.ReshardingID); got.State != MigrationDeprecated {
		t.Fatalf("drain to 0 = %s", got.State)
	}
	back := e.scaleGroup("orders", "g", 5)
	if back.FromShardCount != 0 || back.ToShardCount != 5 {
		t.Fatalf("scale from 0 = %+v", back)
	}
	// Create still requires at least 1.
	e.do("POST", groupPath("orders", "h"), createBody(0)).wantAPIError(t, 400, "BAD_REQUEST", CodeInvalidRequest)
}

// TestRollbackRules: only the active ACTIVE migration rolls back, at once;
// again on ROLLED_BACK returns the same object; others are 422.
func TestRollbackRules(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 2)
	m := e.scaleGroup("orders", "g", 6)
	path := groupPath("orders", "g") + "/migrations/" + m.ReshardingID + "/rollback"
	e.clock.Advance(time.Second)
	var rb migrationView
	e.mustStatus(e.do("POST", path, auditBody()), 202).decode(t, &rb)
	if rb.State != MigrationRolledBack || rb.ReshardingID != m.ReshardingID || !time.Time(rb.UpdatedAt).After(time.Time(m.UpdatedAt)) {
		t.Fatalf("rollback = %+v", rb)
	}
	g := e.group("orders", "g")
	if g.ShardCount != 2 || g.ActiveMigration != nil || g.MetadataVersion != 3 || g.GroupEpoch != 3 {
		t.Fatalf("group after rollback = %+v", g)
	}
	again := e.mustStatus(e.do("POST", path, auditBody()), 202)
	var rb2 migrationView
	again.decode(t, &rb2)
	if rb2 != rb {
		t.Fatalf("second rollback = %+v, want %+v", rb2, rb)
	}
	if g2 := e.group("orders", "g"); g2.MetadataVersion != 3 {
		t.Fatalf("second rollback bumped the group: %+v", g2)
	}

	// DEPRECATED → 422.
	done := e.scaleGroup("orders", "g", 1)
	e.ticks(2, tick)
	e.do("POST", groupPath("orders", "g")+"/migrations/"+done.ReshardingID+"/rollback", auditBody()).
		wantAPIError(t, 422, "UNPROCESSABLE_ENTITY", CodeRollbackNotAllowed)

	// DRAINING → 422.
	draining := e.scaleGroup("orders", "g", 0)
	e.c.SetUndrainedShard("orders", "g", 0, true)
	e.ticks(1, tick)
	e.do("POST", groupPath("orders", "g")+"/migrations/"+draining.ReshardingID+"/rollback", auditBody()).
		wantAPIError(t, 422, "UNPROCESSABLE_ENTITY", CodeRollbackNotAllowed)
	if e.migration("orders", "g", draining.ReshardingID).State != MigrationDraining {
		t.Fatal("a refused rollback changed the migration")
	}
	var hist migrationsView
	e.mustStatus(e.do("GET", "/coord/v1/monitoring/streams/orders/groups/g/migrations", nil), 200).decode(t, &hist)
	if len(hist.Migrations) != 3 || hist.Migrations[0].ReshardingID != m.ReshardingID || *hist.ActiveReshardingID != draining.ReshardingID {
		t.Fatalf("history = %+v", hist)
	}
}

// TestPartialStreamScaleFailure: groups before the failing one go ACTIVE,
// the failing one keeps PREPARING with the old count, later ones are
// untouched; retries get 409 until the earlier ones finish, then the same
// target resumes while a different one is 409.
func TestPartialStreamScaleFailure(t *testing.T) {
	e := newEnv(t, Options{})
	for _, g := range []string{"c", "a", "b"} {
		e.createGroup("orders", g, 4)
	}
	e.c.FailStreamScaleAt("orders", 1)
	e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(2)).
		wantAPIError(t, 503, "SERVICE_UNAVAILABLE", CodeRedisProvisioningFailed)
	a, b, c := e.group("orders", "a"), e.group("orders", "b"), e.group("orders", "c")
	if a.ActiveMigration == nil || a.ActiveMigration.State != MigrationActive || a.ShardCount != 2 {
		t.Fatalf("a = %+v", a)
	}
	if b.ActiveMigration == nil || b.ActiveMigration.State != MigrationPreparing || b.ShardCount != 4 || b.MetadataVersion != 1 {
		t.Fatalf("b = %+v", b)
	}
	if c.ActiveMigration != nil || c.ShardCount != 4 || c.MetadataVersion != 1 {
		t.Fatalf("c = %+v", c)
	}
	e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(2)).wantAPIError(t, 409, "CONFLICT", CodeActiveMigrationExists)

	e.ticks(2, tick) // a (scale-in, no members) finishes; b stays PREPARING
	if g := e.group("orders", "a"); g.ActiveMigration != nil {
		t.Fatalf("a did not finish: %+v", g.ActiveMigration)
	}
	if g := e.group("orders", "b"); g.ActiveMigration.State != MigrationPreparing {
		t.Fatalf("tick moved PREPARING: %+v", g.ActiveMigration)
	}
	e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(3)).wantAPIError(t, 409, "CONFLICT", CodeActiveMigrationExists)
	s := e.scaleStream("orders", 2)
	if strings.Join(s.AffectedConsumerGroups, ",") != "a,b,c" {
		t.Fatalf("affected = %v", s.AffectedConsumerGroups)
	}
	if s.Migrations[0].ReshardingID != NoopReshardingID || s.Migrations[1].ReshardingID != b.ActiveMigration.ReshardingID ||
		s.Migrations[1].State != MigrationActive || s.Migrations[2].State != MigrationActive {
		t.Fatalf("resumed scale = %+v", s.Migrations)
	}
	if g := e.group("orders", "b"); g.ShardCount != 2 || g.MetadataVersion != 2 {
		t.Fatalf("resumed b = %+v", g)
	}
}

// TestResumeOnGroupScale: a PREPARING migration is also resumed by the
// group-level scale with the same target.
func TestResumeOnGroupScale(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "a", 4)
	e.c.FailStreamScaleAt("orders", 0)
	e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(6)).wantAPIError(t, 503, "SERVICE_UNAVAILABLE", CodeRedisProvisioningFailed)
	prep := e.group("orders", "a").ActiveMigration
	e.do("POST", groupPath("orders", "a")+"/scale", scaleBody(4)).wantAPIError(t, 409, "CONFLICT", CodeActiveMigrationExists)
	m := e.scaleGroup("orders", "a", 6)
	if m.ReshardingID != prep.ReshardingID || m.State != MigrationActive || m.FromShardCount != 4 {
		t.Fatalf("resume = %+v (prepared %+v)", m, prep)
	}
}

// TestStreamScaleAffectsEveryGroup: one migration per group in name order;
// groups scaled separately may differ, and one active migration anywhere
// blocks the whole stream scale.
func TestStreamScaleAffectsEveryGroup(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "zeta", 2)
	e.createGroup("orders", "alpha", 3)
	e.createGroup("other", "alpha", 3)
	s := e.scaleStream("orders", 3)
	if strings.Join(s.AffectedConsumerGroups, ",") != "alpha,zeta" || s.StreamPrefix != "orders" {
		t.Fatalf("scale = %+v", s)
	}
	if s.Migrations[0].ReshardingID != NoopReshardingID || s.Migrations[1].FromShardCount != 2 || s.Migrations[1].ToShardCount != 3 {
		t.Fatalf("migrations = %+v", s.Migrations)
	}
	if g := e.group("other", "alpha"); g.ShardCount != 3 || g.ActiveMigration != nil {
		t.Fatalf("other prefix touched: %+v", g)
	}
	// zeta is ACTIVE (scale-out, no members): the noop-able alpha is blocked too.
	e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(3)).wantAPIError(t, 409, "CONFLICT", CodeActiveMigrationExists)
}

// TestDrainingWaitsForRemovedShardOwner: DRAINING completes only once no
// live member owns or revokes a shard at or above the new count, here a
// member that rejoins still reporting removed shard 3.
func TestDrainingWaitsForRemovedShardOwner(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 4)
	m := e.scaleGroup("orders", "g", 2)
	e.ticks(1, tick)
	if got := e.migration("orders", "g", m.ReshardingID); got.State != MigrationDraining {
		t.Fatalf("after 1 tick = %s", got.State)
	}
	a := e.member("orders", "g", "a")
	a.owned = []int{3}
	if r := a.beat(); r.Status != HeartbeatRevokePending {
		t.Fatalf("join with a removed shard = %+v", r)
	}
	e.ticks(3, tick)
	if got := e.migration("orders", "g", m.ReshardingID); got.State != MigrationDraining {
		t.Fatalf("member still reports orders:3 = %s", got.State)
	}
	a.beat() // owned = assigned, without shard 3
	if got := e.migration("orders", "g", m.ReshardingID); got.State != MigrationDeprecated {
		t.Fatalf("after release = %s", got.State)
	}
}
