package prefix

import (
	"testing"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

func TestRunExplains(t *testing.T) {
	planned := map[string]int64{"a": 4, "b": 4}
	cases := []struct {
		name    string
		entries []Entry
		strike  bool
		n       string
		was     int64
		now     int64
		want    bool
	}{
		{name: "nothing journaled", n: "a", was: 4, now: 6},
		{name: "the run's stream scale, as planned", entries: []Entry{{Kind: StreamScale, Target: 6, Planned: planned}}, n: "a", was: 4, now: 6, want: true},
		{name: "another target", entries: []Entry{{Kind: StreamScale, Target: 8, Planned: planned}}, n: "a", was: 4, now: 6},
		{name: "the plan saw the group at another count", entries: []Entry{{Kind: StreamScale, Target: 6, Planned: planned}}, n: "a", was: 3, now: 6},
		{name: "a group the plan did not show", entries: []Entry{{Kind: StreamScale, Target: 6, Planned: planned}}, n: "c", was: 4, now: 6},
		{name: "a plan that could not preview", entries: []Entry{{Kind: StreamScale, Target: 6}}, n: "c", was: 4, now: 6, want: true},
		{name: "a per-group step of a take-over", entries: []Entry{{Kind: ScaleGroup, Group: "b", Target: 6, Planned: planned}}, n: "b", was: 4, now: 6, want: true},
		{name: "a revert's rollback", entries: []Entry{{Kind: Rollback, Group: "a", Target: 4, Planned: map[string]int64{"a": 6}}}, n: "a", was: 6, now: 4, want: true},
		{name: "struck: proved not sent", entries: []Entry{{Kind: StreamScale, Target: 6, Planned: planned}}, strike: true, n: "a", was: 4, now: 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r Run
			for _, e := range tc.entries {
				r.Note("orders", e)
			}
			if tc.strike {
				r.Strike("orders")
			}
			if got := r.Explains("orders", tc.n, tc.was, tc.now); got != tc.want {
				t.Fatalf("Explains(%q, %d→%d) = %v, want %v", tc.n, tc.was, tc.now, got, tc.want)
			}
			if r.Explains("other", tc.n, tc.was, tc.now) {
				t.Fatal("a step of one prefix explained a group of another")
			}
		})
	}
}

func TestRunAsPlanned(t *testing.T) {
	var r Run
	grp := func(name string, count int32, am *client.Migration) client.Group {
		return client.Group{StreamPrefix: "orders", ConsumerGroup: name, ShardCount: count, ActiveMigration: am}
	}
	if got := r.AsPlanned(grp("a", 6, nil)); got.ShardCount != 6 {
		t.Fatalf("nothing journaled: %d, want the group as it is", got.ShardCount)
	}
	r.Note("orders", Entry{Kind: StreamScale, Target: 6, Planned: map[string]int64{"a": 4, "b": 4}})
	for _, tc := range []struct {
		name string
		in   client.Group
		want int32
	}{
		{"at the target", grp("a", 6, nil), 4},
		{"under way to it", grp("b", 4, &client.Migration{ToShardCount: 6, State: client.MigrationActive}), 4},
		{"at another count", grp("a", 5, nil), 5},
		{"not in the plan", grp("c", 6, nil), 6},
	} {
		if got := r.AsPlanned(tc.in); got.ShardCount != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got.ShardCount, tc.want)
		}
	}
	// A later step with an empty plan (a created group's rescale) explains
	// nothing and hides nothing.
	r.Note("orders", Entry{Kind: ScaleGroup, Group: "new", Target: 6, Planned: map[string]int64{}})
	if got := r.AsPlanned(grp("a", 6, nil)); got.ShardCount != 4 {
		t.Fatalf("after an empty-plan step: %d, want the count planned by the stream scale (4)", got.ShardCount)
	}
	if r.Explains("orders", "c", 5, 6) {
		t.Fatal("an empty-plan step explained a group it did not plan")
	}
	other := client.Group{StreamPrefix: "payments", ConsumerGroup: "a", ShardCount: 6}
	if got := r.AsPlanned(other); got.ShardCount != 6 {
		t.Fatalf("a group of another prefix: %d, want 6", got.ShardCount)
	}
}
