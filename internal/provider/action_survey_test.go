package provider

import (
	"strings"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

func testMigration(id string, from, to int32, state client.MigrationState, created time.Time) *client.Migration {
	return &client.Migration{ReshardingID: id, FromShardCount: from, ToShardCount: to, State: state,
		CreatedAt: client.Time{Time: created}, UpdatedAt: client.Time{Time: created.Add(time.Second)}}
}

// The plan's preview says what the invocation decides from the same survey.
func TestRollbackSurveyPreview(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 2, 33, 56, 0, time.UTC)
	active := func(g string, from, to int32) groupMigration {
		return groupMigration{group: g, shardCount: to, m: testMigration("reshard-"+g, from, to, client.MigrationActive, t0)}
	}
	inState := func(g string, state client.MigrationState) groupMigration {
		return groupMigration{group: g, shardCount: 4, m: testMigration("reshard-"+g, 4, 3, state, t0)}
	}
	for _, tc := range []struct {
		name    string
		s       rollbackSurvey
		summary string
		detail  []string
		absent  []string
	}{
		{
			name:    "every ACTIVE group of a prefix",
			s:       rollbackSurvey{prefix: "orders", active: []groupMigration{active("a", 8, 12), active("b", 8, 12)}},
			summary: `The invocation will roll back 2 migration(s) of stream prefix "orders"`,
			detail: []string{`group "a": migration reshard-a, 8→12 shards, ACTIVE since 2026-12-02T02:33:57Z: back to 8 shards`,
				`group "b": migration reshard-b`, "(orders:8..orders:11) are stranded", `requestedBy "terraform:ci"`},
		},
		{
			name:    "a scale-in strands nothing",
			s:       rollbackSurvey{prefix: "orders", group: "a", active: []groupMigration{active("a", 12, 8)}},
			summary: `The invocation will roll back 1 migration(s) of group "a" under stream prefix "orders"`,
			absent:  []string{"stranded"},
		},
		{
			name:    "a prefix with a PREPARING migration is refused before sending",
			s:       rollbackSurvey{prefix: "orders", active: []groupMigration{active("a", 8, 12)}, notActive: []groupMigration{inState("b", client.MigrationPreparing)}},
			summary: `The invocation will refuse to roll back stream prefix "orders"`,
			detail: []string{"The action sends nothing", `group "b": migration reshard-b, 4→3 shards, PREPARING since`,
				"PREPARING: the new shards are still being provisioned", "ACTIVE, and not rolled back because of the above:", `group "a"`},
		},
		{
			name:    "a named group's DRAINING migration is refused by the coordinator",
			s:       rollbackSurvey{prefix: "orders", group: "b", notActive: []groupMigration{inState("b", client.MigrationDraining)}},
			summary: `The invocation will be refused: the migration of group "b" under stream prefix "orders" is not ACTIVE`,
			detail:  []string{"422 ROLLBACK_NOT_ALLOWED", "DRAINING: consumers are already draining"},
		},
		{
			name:    "already rolled back",
			s:       rollbackSurvey{prefix: "orders", rolledBack: []groupMigration{inState("a", client.MigrationRolledBack)}},
			summary: `The invocation will change nothing: the resharding of stream prefix "orders" is already rolled back`,
			detail:  []string{"ROLLED_BACK since"},
		},
		{
			name:    "a completed migration",
			s:       rollbackSurvey{prefix: "orders", idle: []groupMigration{inState("a", client.MigrationDeprecated)}},
			summary: `The invocation will fail: stream prefix "orders" has no migration to roll back`,
			detail:  []string{"DEPRECATED since", "A completed (DEPRECATED) migration cannot be rolled back"},
		},
		{
			name: "a prefix where one group's migration completed and another's is ACTIVE is refused before sending",
			s: rollbackSurvey{prefix: "orders", active: []groupMigration{active("b", 8, 12)},
				idle: []groupMigration{{group: "a", shardCount: 12, m: testMigration("reshard-a", 8, 12, client.MigrationDeprecated, t0)}}},
			summary: `The invocation will refuse to roll back stream prefix "orders": it would leave the prefix at different shard counts`,
			detail: []string{"The action sends nothing",
				`group "a": 12 shards, keeps its count (migration reshard-a, 8→12 shards, DEPRECATED since 2026-12-02T02:33:57Z: completed`,
				`group "b": 12 shards, back to 8 (migration reshard-b, 8→12 shards, ACTIVE since`,
				`let the ACTIVE migration(s) of "b" complete`, "return to 8: roll back each ACTIVE group by itself (set consumer_group)",
				"shard_count = 8", `("a", whose migration completed and cannot be rolled back)`},
			absent: []string{"Will send"},
		},
		{
			name:    "ACTIVE migrations from different counts are refused before sending",
			s:       rollbackSurvey{prefix: "orders", active: []groupMigration{active("a", 12, 16), active("b", 8, 16)}},
			summary: `The invocation will refuse to roll back stream prefix "orders": it would leave the prefix at different shard counts`,
			detail:  []string{`group "a": 16 shards, back to 12`, `group "b": 16 shards, back to 8`, "return to one of the old counts (8 or 12)", "scale the whole prefix to that count"},
		},
		{
			name: "a rollback that brings a split prefix together is sent",
			s: rollbackSurvey{prefix: "orders", active: []groupMigration{active("b", 8, 12)},
				idle: []groupMigration{{group: "a", shardCount: 8}}},
			summary: `The invocation will roll back 1 migration(s) of stream prefix "orders"`,
		},
		{
			name: "a one-group rollback that leaves the prefix split says so",
			s: rollbackSurvey{prefix: "orders", group: "b", active: []groupMigration{active("b", 8, 12)},
				siblings: []groupMigration{{group: "a", shardCount: 12}}},
			summary: `The invocation will roll back 1 migration(s) of group "b" under stream prefix "orders"`,
			detail: []string{`This leaves stream prefix "orders" at different shard counts: group "b" goes back to 8 shards`,
				`"a" (12 shards)`, "redisstreamcoordinator_group_shard_count"},
		},
		{
			name: "a one-group rollback to its siblings' count says nothing about a split",
			s: rollbackSurvey{prefix: "orders", group: "b", active: []groupMigration{active("b", 8, 12)},
				siblings: []groupMigration{{group: "a", shardCount: 8}}},
			summary: `The invocation will roll back 1 migration(s) of group "b" under stream prefix "orders"`,
			absent:  []string{"different shard counts"},
		},
		{
			name:    "a prefix without groups",
			s:       rollbackSurvey{prefix: "orders"},
			summary: `The invocation will fail: stream prefix "orders" has no migration to roll back`,
			detail:  []string{`stream prefix "orders" has no consumer group`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			summary, detail := tc.s.preview("terraform:ci")
			if summary != tc.summary {
				t.Errorf("summary:\n got %q\nwant %q", summary, tc.summary)
			}
			for _, want := range tc.detail {
				if !strings.Contains(detail, want) {
					t.Errorf("detail lacks %q:\n%s", want, detail)
				}
			}
			for _, unwanted := range tc.absent {
				if strings.Contains(detail, unwanted) {
					t.Errorf("detail contains %q:\n%s", unwanted, detail)
				}
			}
		})
	}
}

func TestLatestMigration(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	ms := []client.Migration{
		*testMigration("second", 4, 6, client.MigrationRolledBack, t0.Add(time.Hour)),
		*testMigration("first", 2, 4, client.MigrationDeprecated, t0),
	}
	if got := latestMigration(ms); got == nil || got.ReshardingID != "second" {
		t.Errorf("latestMigration = %+v, want the one created last", got)
	}
	if got := latestMigration(nil); got != nil {
		t.Errorf("latestMigration(nil) = %+v", got)
	}
}
