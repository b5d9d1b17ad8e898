package coordinator

import (
	"slices"
	"testing"
)

// TestAlternativeNumbering: within what the contract fixes (a new group at
// 1/1/1, a scale and a rollback bump metadataVersion and groupEpoch), the
// alternative numbering steps by 3 and 2, versions the end of a migration,
// assigns contiguous ranges and lists groups in reverse order.
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

	m := e.scaleGroup("orders", "a", 2) // a scale-in without members completes by itself
	if g := e.group("orders", "a"); g.MetadataVersion != 4 || g.GroupEpoch != 3 || g.AssignmentEpoch != 3 {
		t.Fatalf("after the scale = %+v, want version 4, epochs 3", g)
	}
	e.ticks(2, tick)
	if got := e.migration("orders", "a", m.ReshardingID); got.State != MigrationDeprecated {
		t.Fatalf("scale-in = %s, want DEPRECATED", got.State)
	}
	if g := e.group("orders", "a"); g.MetadataVersion != 7 || g.ActiveMigration != nil {
		t.Fatalf("after completion = %+v, want version 7", g)
	}

	x, y := e.member("orders", "b", "x"), e.member("orders", "b", "y")
	e.converge("orders", "b", x, y)
	if !slices.Equal(x.owned, []int{0, 1}) || !slices.Equal(y.owned, []int{2, 3}) {
		t.Fatalf("owned x=%v y=%v, want contiguous ranges", x.owned, y.owned)
	}
}

// TestDefaultNumberingIsTheRealServers: the zero Numbering bumps by one,
// only on scale and rollback, and lists in name order.
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
	e.ticks(2, tick)
	if g := e.group("orders", "a"); g.MetadataVersion != 2 || g.GroupEpoch != 2 || g.ActiveMigration != nil {
		t.Fatalf("after a finished scale = %+v, want version 2, epoch 2", g)
	}
}
