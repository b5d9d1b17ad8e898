package provider

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Producers route with one shard count per prefix, so a prefix-wide rollback
// that would leave groups now at one count at different counts is refused
// before sending (splitsPrefix); a rollback of one named group is sent, and the
// preview warns (leavesSplit).

// countAfter: ACTIVE groups go back to fromShardCount; others keep their count.
func (s *rollbackSurvey) countAfter(gm groupMigration) int32 {
	for _, a := range s.active {
		if a.group == gm.group {
			return a.m.FromShardCount
		}
	}
	return gm.shardCount
}

func (s *rollbackSurvey) everyGroup() []groupMigration {
	all := slices.Concat(s.active, s.notActive, s.rolledBack, s.idle)
	sort.Slice(all, func(i, j int) bool { return all[i].group < all[j].group })
	return all
}

func (s *rollbackSurvey) splitsPrefix() bool {
	if s.group != "" || len(s.active) == 0 {
		return false
	}
	after := map[int32]int32{} // a count now, and where its groups end
	for _, gm := range s.everyGroup() {
		if a, ok := after[gm.shardCount]; ok && a != s.countAfter(gm) {
			return true
		}
		after[gm.shardCount] = s.countAfter(gm)
	}
	return false
}

func (s *rollbackSurvey) splitDetail() string {
	var b strings.Builder
	b.WriteString("Rolling back only the ACTIVE migrations would leave the prefix's groups at different shard counts, and producers " +
		"route with one count per prefix: entries would land on shards some groups never read. The action sends nothing in that case. " +
		"Each group now, and after the rollback the action was asked for:")
	var completed, active []string
	for _, gm := range s.everyGroup() {
		after := s.countAfter(gm)
		what := "keeps its count"
		if after != gm.shardCount {
			what = fmt.Sprintf("back to %d", after)
		}
		fmt.Fprintf(&b, "\n  - group %q: %d shards, %s (%s)", gm.group, gm.shardCount, what, s.describeMigration(gm))
		switch {
		case after != gm.shardCount:
			active = append(active, gm.group)
		case gm.m != nil && gm.m.ReshardingID != "" && gm.m.State == client.MigrationDeprecated:
			completed = append(completed, gm.group)
		}
	}
	var froms []int32
	for _, gm := range s.active {
		froms = append(froms, gm.m.FromShardCount)
	}
	slices.Sort(froms)
	froms = slices.Compact(froms)
	old, count := fmt.Sprint(froms[0]), fmt.Sprint(froms[0])
	if len(froms) > 1 {
		old, count = "one of the old counts ("+joinEach(froms, " or ", func(c int32) string { return fmt.Sprint(c) })+")", "that count"
	}
	b.WriteString("\n\nTo bring the prefix back to one shard count, either:")
	fmt.Fprintf(&b, "\n  - keep the new count: let the ACTIVE migration(s) of %s complete (a scale-out completes once a consumer of the group "+
		"joins and converges); or", quotedList(active))
	fmt.Fprintf(&b, "\n  - return to %s: roll back each ACTIVE group by itself (set consumer_group), then scale the whole prefix to %s with "+
		"redisstreamcoordinator_group_shard_count (shard_count = %s): the stream-level scale reshards the groups that are not at that "+
		"count", old, count, count)
	if len(completed) > 0 {
		fmt.Fprintf(&b, " (%s, whose migration completed and cannot be rolled back)", quotedList(completed))
	}
	b.WriteString(" and leaves the others as they are.")
	return b.String()
}

func (s *rollbackSurvey) describeMigration(gm groupMigration) string {
	if gm.m == nil {
		return "never resharded"
	}
	note := ""
	switch gm.m.State {
	case client.MigrationDeprecated:
		note = ": completed, no rollback undoes it"
	case client.MigrationActive:
		note = ": would be rolled back"
	}
	return fmt.Sprintf("migration %s, %d→%d shards, %s since %s%s", gm.m.ReshardingID, gm.m.FromShardCount, gm.m.ToShardCount,
		gm.m.State, formatSince(gm.m.UpdatedAt), note)
}

func (s *rollbackSurvey) leavesSplit() string {
	if s.group == "" || len(s.active) != 1 {
		return ""
	}
	after := s.active[0].m.FromShardCount
	if !slices.ContainsFunc(s.siblings, func(sib groupMigration) bool { return sib.shardCount != after }) {
		return ""
	}
	others := joinEach(s.siblings, ", ", func(sib groupMigration) string { return fmt.Sprintf("%q (%d shards)", sib.group, sib.shardCount) })
	return fmt.Sprintf("This leaves stream prefix %q at different shard counts: group %q goes back to %d shards, and the prefix's other "+
		"groups keep theirs: %s. Producers route with one count per prefix, so entries would land on shards some groups never read. "+
		"To bring the prefix back to one count afterwards, scale it with redisstreamcoordinator_group_shard_count (a stream-level scale "+
		"reshards every group that is not at the target count), or roll back the whole prefix instead (omit consumer_group), which "+
		"refuses when it would split the prefix.", s.prefix, s.group, after, others)
}

func quotedList(names []string) string {
	if len(names) == 0 {
		return "the ACTIVE groups"
	}
	return quoted(names)
}
