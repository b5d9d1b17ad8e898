package prefix

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Record is one reading of every group of a stream prefix, in name order.
type Record struct {
	Prefix string
	Groups []client.Group
	// CountsOnly: the record holds counts but not migrations, so Changes
	// compares counts only.
	CountsOnly bool
}

// FromListing keeps the groups of prefix p from a listing of every group.
func FromListing(all []client.Group, p string) Record {
	r := Record{Prefix: p}
	for _, g := range all {
		if g.StreamPrefix == p {
			r.Groups = append(r.Groups, g)
		}
	}
	sort.Slice(r.Groups, func(i, j int) bool { return r.Groups[i].ConsumerGroup < r.Groups[j].ConsumerGroup })
	return r
}

// Group returns the record of group g, nil when the prefix has none.
func (r Record) Group(g string) *client.Group {
	for i := range r.Groups {
		if r.Groups[i].ConsumerGroup == g {
			return &r.Groups[i]
		}
	}
	return nil
}

// Counts maps every group to its shard count.
func (r Record) Counts() map[string]int32 {
	out := make(map[string]int32, len(r.Groups))
	for _, g := range r.Groups {
		out[g.ConsumerGroup] = g.ShardCount
	}
	return out
}

// With is r with g in place of the group of its name, or added.
func (r Record) With(g client.Group) Record {
	return FromListing(append(r.Without(g.ConsumerGroup).Groups, g), r.Prefix)
}

// Without leaves the named groups out.
func (r Record) Without(names ...string) Record {
	out := Record{Prefix: r.Prefix}
	for _, g := range r.Groups {
		if !contains(names, g.ConsumerGroup) {
			out.Groups = append(out.Groups, g)
		}
	}
	return out
}

func contains(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// Unfinished is group g's migration while it is under way, or nil.
func Unfinished(g *client.Group) *client.Migration {
	if g == nil || g.ActiveMigration.Finished() {
		return nil
	}
	return g.ActiveMigration
}

// AtTarget reports a group that is at the target with nothing under way.
func AtTarget(g client.Group, target int32) bool {
	return g.ShardCount == target && g.ActiveMigration.Finished()
}

// Split lists the groups neither at the target nor under way to it: producers
// routing by one group's count would write to shards another never reads. A
// PREPARING migration keeps the old count and never moves by itself, so a
// group at the target with one elsewhere is at the target.
func (r Record) Split(target int32) []client.Group {
	var out []client.Group
	for _, g := range r.Groups {
		am := Unfinished(&g)
		if g.ShardCount == target && (am == nil || am.State == client.MigrationPreparing) {
			continue
		}
		if am != nil && am.ToShardCount == target && am.State != client.MigrationPreparing {
			continue
		}
		out = append(out, g)
	}
	return out
}

// Distinct reports whether the groups hold (or head to) more than one count.
func (r Record) Distinct() bool {
	seen := map[int32]bool{}
	for _, g := range r.Groups {
		c := g.ShardCount
		if am := Unfinished(&g); am != nil {
			c = am.ToShardCount
		}
		seen[c] = true
	}
	return len(seen) > 1
}

// Changes lists how now differs from the record, leaving out the groups ours
// names. A migration that advances or completes at its target moves by itself
// and is no change; a resumed PREPARING one is.
func (r Record) Changes(now Record, ours func(g string) bool) []string {
	if ours == nil {
		ours = func(string) bool { return false }
	}
	var out []string
	for _, was := range r.Groups {
		name := was.ConsumerGroup
		if ours(name) {
			continue
		}
		is := now.Group(name)
		if is == nil {
			out = append(out, fmt.Sprintf("group %q (%d shards) no longer exists", name, was.ShardCount))
			continue
		}
		wasM, isM := Unfinished(&was), Unfinished(is)
		switch {
		case r.CountsOnly:
			if was.ShardCount != is.ShardCount {
				out = append(out, fmt.Sprintf("group %q went from %d to %d shards", name, was.ShardCount, is.ShardCount))
			}
		case wasM == nil && isM == nil && was.ShardCount != is.ShardCount:
			out = append(out, fmt.Sprintf("group %q went from %d to %d shards", name, was.ShardCount, is.ShardCount))
		case wasM == nil && isM != nil && was.ShardCount != is.ShardCount:
			out = append(out, fmt.Sprintf("group %q went from %d to %d shards (%s started)", name, was.ShardCount, is.ShardCount, Describe(isM)))
		case wasM == nil && isM != nil:
			// PREPARING keeps the old count, yet the next scale resumes it.
			out = append(out, fmt.Sprintf("group %q started %s", name, Describe(isM)))
		case wasM != nil && isM != nil && isM.ReshardingID != wasM.ReshardingID:
			out = append(out, fmt.Sprintf("group %q: %s was followed by %s", name, Describe(wasM), Describe(isM)))
		case wasM != nil && isM == nil && is.ShardCount != wasM.ToShardCount:
			out = append(out, fmt.Sprintf("group %q: %s ended at %d shards", name, Describe(wasM), is.ShardCount))
		case wasM != nil && wasM.State == client.MigrationPreparing && isM != nil && isM.State != client.MigrationPreparing:
			// PREPARING never moves by itself: a scale to its target resumed it.
			out = append(out, fmt.Sprintf("group %q: %s was resumed: now %s", name, Describe(wasM), Describe(isM)))
		case wasM != nil && wasM.State == client.MigrationPreparing && isM == nil:
			out = append(out, fmt.Sprintf("group %q: %s was resumed and completed at %d shards", name, Describe(wasM), is.ShardCount))
		}
	}
	for _, is := range now.Groups {
		if !ours(is.ConsumerGroup) && r.Group(is.ConsumerGroup) == nil {
			out = append(out, fmt.Sprintf("group %q (%d shards) appeared", is.ConsumerGroup, is.ShardCount))
		}
	}
	sort.Strings(out)
	return out
}

// Moved lists the Changes that a change to target did not bring about. It is
// the executor's basis rule for every record after the first, so a later
// reading sends no more than the plan showed.
func (r Record) Moved(now Record, target int32, ours func(g string) bool) []string {
	if ours == nil {
		ours = func(string) bool { return false }
	}
	towards := func(g string) bool {
		if ours(g) {
			return true
		}
		was, is := r.Group(g), now.Group(g)
		if was == nil || is == nil {
			return false
		}
		am := Unfinished(is)
		switch {
		case am == nil:
			return is.ShardCount == target
		case am.ToShardCount != target:
			return false
		case am.State == client.MigrationPreparing:
			wasM := Unfinished(was)
			return !AtTarget(*was, target) && (wasM == nil || wasM.ToShardCount != target)
		}
		return true
	}
	return r.Changes(now, towards)
}

// Describe names a migration for a diagnostic.
func Describe(m *client.Migration) string {
	return fmt.Sprintf("migration %s (%d→%d shards, %s)", m.ReshardingID, m.FromShardCount, m.ToShardCount, m.State)
}

// String lists the groups with their counts, for diagnostics and logs.
func (r Record) String() string {
	if len(r.Groups) == 0 {
		return "no groups"
	}
	parts := make([]string, len(r.Groups))
	for i, g := range r.Groups {
		parts[i] = fmt.Sprintf("%q %d", g.ConsumerGroup, g.ShardCount)
		if am := Unfinished(&g); am != nil {
			parts[i] += fmt.Sprintf(" (%s %d→%d)", am.State, am.FromShardCount, am.ToShardCount)
		}
	}
	return strings.Join(parts, ", ")
}
