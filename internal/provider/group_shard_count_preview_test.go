package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// The preview's verdict is prefix.Decide's: what it waits for, what it
// refuses, and whether it completes by itself, for the prefix as the plan
// sees it.
func TestJudge(t *testing.T) {
	grp := func(name string, count int32, empty bool, am *client.Migration) client.Group {
		g := client.Group{StreamPrefix: "p", ConsumerGroup: name, ShardCount: count, State: client.GroupStable, ActiveMigration: am}
		if empty {
			g.State = client.GroupEmpty
		}
		return g
	}
	mig := func(from, to int32, st client.MigrationState) *client.Migration {
		return &client.Migration{ReshardingID: "reshard-x", FromShardCount: from, ToShardCount: to, State: st}
	}
	cases := []struct {
		name      string
		groups    []client.Group
		target    int32
		rollback  bool
		completes bool
		blocked   []string // substrings of blocked_by, or of the refusal
		fatal     bool
	}{
		{"a plain scale-out with live consumers", []client.Group{grp("a", 4, false, nil), grp("b", 4, false, nil)}, 6, false, true, nil, false},
		{"a group this apply creates is EMPTY at its initial count: its scale-out waits for a consumer", []client.Group{grp("a", 2, true, nil), grp("b", 4, false, nil)}, 4, false, false,
			[]string{`scale-out of group(s) "a", which have no live consumer`}, false},
		{"a sibling with no consumer is scaled out", []client.Group{grp("a", 4, false, nil), grp("b", 4, true, nil)}, 6, false, false, []string{`scale-out of group(s) "b"`}, false},
		{"its own stalled scale-out to the target is taken over", []client.Group{grp("a", 6, true, mig(4, 6, client.MigrationActive))}, 6, false, false,
			[]string{`takes over migration reshard-x of group "a"`, `scale-out of group(s) "a"`}, false},
		{"a migration elsewhere is waited for", []client.Group{grp("a", 4, false, nil), grp("b", 3, false, mig(4, 3, client.MigrationDraining))}, 6, false, true,
			[]string{`waits for migration reshard-x of group "b" (4→3 shards, DRAINING) to finish first`}, false},
		{"a stalled migration elsewhere refuses", []client.Group{grp("a", 4, false, nil), grp("b", 8, true, mig(4, 8, client.MigrationActive))}, 6, false, false,
			[]string{`must wait for migration reshard-x of group "b" (4→8 shards, ACTIVE)`, "no live consumer"}, true},
		{"a revert beside a migration to the target", []client.Group{grp("a", 6, false, mig(4, 6, client.MigrationActive)), grp("b", 4, false, mig(2, 4, client.MigrationActive))}, 4, true, true,
			[]string{`rolls back migration reshard-x of group "a"`, `takes over migration reshard-x of group "b"`}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := prefix.Input{Record: prefix.Record{Prefix: "p", Groups: tc.groups}, Self: "a", Target: tc.target, RollbackOnRevert: tc.rollback}
			d := prefix.Decide(in)
			pv := previewOf(in, d, -1, types.Int64Null(), planCheckRead)
			text := pv.blockedBy
			if d.Refusal != nil {
				_, text = refusalText("p", tc.target, tc.rollback, d.Refusal)
			}
			if (d.Refusal != nil) != tc.fatal || (!tc.fatal && pv.completes != tc.completes) {
				t.Fatalf("refusal %q, completes %v; want a refusal %v, completes %v", text, pv.completes, tc.fatal, tc.completes)
			}
			for _, want := range tc.blocked {
				if !strings.Contains(text, want) {
					t.Errorf("%q lacks %q", text, want)
				}
			}
		})
	}
}
