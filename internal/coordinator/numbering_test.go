package coordinator

import (
	"slices"
	"testing"
	"time"
)

// TestAlternativeNumbering: within what the contract fixes (a new group at
// 1/1/1, the events that move metadataVersion and groupEpoch), the
// alternative numbering steps by 3 and 2, assigns contiguous ranges and lists
// groups in reverse order.
func TestAlternativeNumbering(t *testing.T) {
	e := newEnv(t, Options{Numbering: AlternativeNumbering})
	e.createGroup("orders", "a", 4)
	e.createGroup("orders", "b", 4)
	if g := e.group("orders", "a"); g.MetadataVersion != 1 || g.GroupEpoch != 1 || g.AssignmentEpoch != 1 {
		t.Fatalf("new group = %+v, want the contract's 1/1/1", g)
	}
	var list struct{ Groups []groupView }
	e.mustStatus(e.do("GET", "/coord/v1/monitoring/groups", nil), 200).decode(t, &list)
	if len(list.Groups) != 2 || list.Groups[0].ConsumerGroup != "b" {
		t.Fatalf("listing = %+v, want b before a", list.Groups)
	}

	e.scaleGroup("orders", "a", 2) // a scale-in without members completes by itself
	if g := e.group("orders", "a"); g.MetadataVersion != 4 || g.GroupEpoch != 3 || g.AssignmentEpoch != 3 {
		t.Fatalf("after the scale = %+v, want version 4, epochs 3", g)
	}

	x, y := e.member("orders", "b", "x"), e.member("orders", "b", "y")
	e.converge("orders", "b", x, y)
	if !slices.Equal(x.owned, []int{0, 1}) || !slices.Equal(y.owned, []int{2, 3}) {
		t.Fatalf("owned x=%v y=%v, want contiguous ranges", x.owned, y.owned)
	}
}

// TestDefaultNumberingIsTheRealServers: the zero Numbering bumps by one and
// lists in name order.
func TestDefaultNumberingIsTheRealServers(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "a", 4)
	e.createGroup("orders", "b", 4)
	var list struct{ Groups []groupView }
	e.mustStatus(e.do("GET", "/coord/v1/monitoring/groups", nil), 200).decode(t, &list)
	if len(list.Groups) != 2 || list.Groups[0].ConsumerGroup != "a" {
		t.Fatalf("listing = %+v, want name order", list.Groups)
	}
	e.scaleGroup("orders", "a", 2)
	if g := e.group("orders", "a"); g.MetadataVersion != 2 || g.GroupEpoch != 2 {
		t.Fatalf("after an accepted scale = %+v, want version 2, epoch 2", g)
	}
}

// TestVersioningFollowsTheContract walks every row of CONTRACT §4 "What
// moves metadataVersion and groupEpoch", under both numberings: each event
// raises metadataVersion by one stride, and groupEpoch by one stride exactly
// where the table says so; steady heartbeats and reads move nothing.
func TestVersioningFollowsTheContract(t *testing.T) {
	for name, n := range map[string]Numbering{"default": {}, "alternative": AlternativeNumbering} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, Options{Numbering: n, MemberLeaseTTL: 15 * time.Second, RebalanceTimeout: time.Hour,
				StaleMemberRetention: 10 * time.Minute})
			vs, es := n.versionStride(), n.epochStride()
			e.createGroup("orders", "g", 2)
			last := e.group("orders", "g")
			if last.MetadataVersion != 1 || last.GroupEpoch != 1 || last.AssignmentEpoch != 1 {
				t.Fatalf("create = %+v, want 1/1/1", last)
			}
			// expect checks the change since the last call: version rises
			// by one stride per event, the epochs by one stride per event
			// that affects assignments.
			expect := func(what string, versionBumps, epochBumps int64) {
				t.Helper()
				now := e.group("orders", "g")
				if dv, de := now.MetadataVersion-last.MetadataVersion, now.GroupEpoch-last.GroupEpoch; dv != versionBumps*vs || de != epochBumps*es ||
					now.AssignmentEpoch != now.GroupEpoch {
					t.Fatalf("%s: version %d→%d, groupEpoch %d→%d (assignmentEpoch %d); want +%d and +%d",
						what, last.MetadataVersion, now.MetadataVersion, last.GroupEpoch, now.GroupEpoch, now.AssignmentEpoch,
						versionBumps*vs, epochBumps*es)
				}
				last = now
			}

			a := e.member("orders", "g", "a")
			a.beat()
			expect("a member joins", 1, 1)
			a.beat()
			a.beat()
			e.do("GET", groupPath("orders", "g"), nil)
			expect("steady heartbeats and reads", 0, 0)
			if r := e.member("orders", "g", "a").send(a.request(a.epoch)); r.Status != HeartbeatOK {
				t.Fatalf("steady heartbeat with the server's version = %s", r.Status)
			}

			grow := e.scaleGroup("orders", "g", 4)
			expect("scale accepted", 1, 1)
			a.beat() // granted the new shards
			a.beat() // reports holding them: converged, and the migration drains
			if got := e.migration("orders", "g", grow.ReshardingID); got.State != MigrationDraining {
				t.Fatalf("after convergence the migration is %s, want DRAINING", got.State)
			}
			expect("migration ACTIVE→DRAINING", 1, 1)
			e.c.Tick()
			if got := e.migration("orders", "g", grow.ReshardingID); got.State != MigrationDeprecated {
				t.Fatalf("after a tick the migration is %s, want DEPRECATED", got.State)
			}
			expect("migration DRAINING→DEPRECATED", 1, 0)

			m := e.scaleGroup("orders", "g", 6)
			expect("scale accepted", 1, 1)
			e.mustStatus(e.do("POST", groupPath("orders", "g")+"/migrations/"+m.ReshardingID+"/rollback", auditBody()), 202)
			expect("rollback", 1, 1)

			b := e.member("orders", "g", "b")
			b.beat()
			expect("a second member joins", 1, 1)
			b.leave()
			expect("a member leaves", 1, 1)
			b.beat()
			expect("a member rejoins", 1, 1)

			// a stops heartbeating; b keeps its lease.
			e.clock.Advance(10 * time.Second)
			b.beat()
			last = e.group("orders", "g")
			e.clock.Advance(6 * time.Second)
			e.c.Tick()
			expect("a member's lease lapses (expired)", 1, 1)

			// A lower epoch than the server holds fences b.
			if r := b.send(b.request(b.epoch - 1)); r.Status != HeartbeatFencedMemberEpoch {
				t.Fatalf("lower epoch = %s", r.Status)
			}
			expect("a member is fenced", 1, 1)

			// Both are EXPIRED/FENCED; they are pruned after the retention,
			// in one pass.
			e.clock.Advance(10 * time.Minute)
			e.c.Tick()
			expect("stale members pruned", 1, 0)
			e.c.Tick()
			expect("a tick with nothing to do", 0, 0)

			// A member that still echoes a version the server never had
			// is told to sync.
			c := e.member("orders", "g", "c")
			c.beat()
			expect("a member joins", 1, 1)
			body := c.request(c.epoch)
			body["metadataVersion"] = last.MetadataVersion + 1
			if r := c.send(body); r.Status != HeartbeatSyncMetadata {
				t.Fatalf("a higher metadataVersion than the server's = %s, want SYNC_METADATA", r.Status)
			}
		})
	}
}
