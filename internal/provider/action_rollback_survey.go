package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// rollbackSurvey serves both the plan's preview and the invocation's decision,
// so the plan shows what the invocation does if nothing changes in between.
type rollbackSurvey struct {
	prefix string
	group  string // "" = every group of the prefix
	active []groupMigration
	// notActive: PREPARING or DRAINING, which the coordinator refuses to roll back.
	notActive []groupMigration
	// rolledBack lets a repeated invocation find its earlier work and succeed.
	rolledBack []groupMigration
	idle       []groupMigration
	siblings   []groupMigration
	// gone: listed but deleted before their migrations were read.
	gone []string
}

type groupMigration struct {
	group      string
	shardCount int32
	m          *client.Migration
}

func (gm groupMigration) String() string {
	if gm.m == nil {
		return fmt.Sprintf("group %q (%d shards, never resharded)", gm.group, gm.shardCount)
	}
	return fmt.Sprintf("group %q: migration %s, %d→%d shards, %s since %s", gm.group, gm.m.ReshardingID,
		gm.m.FromShardCount, gm.m.ToShardCount, gm.m.State, formatSince(gm.m.UpdatedAt))
}

// surveyRollback also reads the history of groups with nothing in progress,
// to tell "already rolled back" from "nothing to roll back".
func surveyRollback(ctx context.Context, api *client.Client, p, g string) (*rollbackSurvey, error) {
	s := &rollbackSurvey{prefix: p, group: g}
	var groups []client.Group
	// A one-group rollback lists the prefix only to tell whether it splits it.
	list := g == ""
	if g != "" {
		grp, err := api.GetGroup(ctx, p, g)
		if err != nil {
			return nil, err
		}
		groups = []client.Group{*grp}
		list = grp.ActiveMigration != nil && grp.ActiveMigration.State == client.MigrationActive
	}
	if list {
		all, err := api.Groups(ctx)
		if err != nil {
			return nil, err
		}
		rec := prefix.FromListing(all, p)
		if g == "" {
			groups = rec.Groups
		} else {
			for _, gi := range rec.Without(g).Groups {
				s.siblings = append(s.siblings, groupMigration{group: gi.ConsumerGroup, shardCount: gi.ShardCount})
			}
		}
	}
	for _, gi := range groups {
		entry := groupMigration{group: gi.ConsumerGroup, shardCount: gi.ShardCount}
		if am := gi.ActiveMigration; am != nil && !am.Finished() {
			m := *am
			entry.m = &m
			if am.State == client.MigrationActive {
				s.active = append(s.active, entry)
			} else {
				s.notActive = append(s.notActive, entry)
			}
			continue
		}
		h, err := api.Migrations(ctx, p, gi.ConsumerGroup)
		if client.ErrorCode(err) == client.CodeGroupNotFound {
			s.gone = append(s.gone, gi.ConsumerGroup)
			continue
		}
		if err != nil {
			return nil, err
		}
		if latest := latestMigration(h.Migrations); latest != nil {
			entry.m = latest
			if latest.State == client.MigrationRolledBack || latest.State == client.MigrationRollingBack {
				s.rolledBack = append(s.rolledBack, entry)
				continue
			}
		}
		s.idle = append(s.idle, entry)
	}
	return s, nil
}

func latestMigration(ms []client.Migration) *client.Migration {
	var latest *client.Migration
	for i := range ms {
		if latest == nil || !ms[i].CreatedAt.Before(latest.CreatedAt.Time) {
			latest = &ms[i]
		}
	}
	return latest
}

func (s *rollbackSurvey) scope() string {
	if s.group != "" {
		return fmt.Sprintf("group %q under stream prefix %q", s.group, s.prefix)
	}
	return fmt.Sprintf("stream prefix %q", s.prefix)
}

// refusedBeforeSending: a one-group rollback is always sent so the coordinator
// decides and audits the refusal.
func (s *rollbackSurvey) refusedBeforeSending() bool {
	return s.group == "" && (len(s.notActive) > 0 || s.splitsPrefix())
}

func (s *rollbackSurvey) nothingToDo() bool {
	return len(s.active) == 0 && len(s.notActive) == 0
}

func notActiveAdvice(m *client.Migration) string {
	switch m.State {
	case client.MigrationPreparing:
		return "PREPARING: the new shards are still being provisioned and producers still route to the old count; it becomes ACTIVE " +
			"once provisioning completes (applying the scale again with the same target resumes it). Roll it back then, if still needed"
	case client.MigrationDraining:
		return "DRAINING: consumers are already draining the shards a scale-in removes; past this point the coordinator allows no " +
			"rollback. Let it finish (drain the removed shards), then scale back with redisstreamcoordinator_group_shard_count"
	}
	return string(m.State) + ": the coordinator allows a rollback only while a migration is ACTIVE"
}

func (s *rollbackSurvey) preview(requestedBy string) (summary, detail string) {
	var b strings.Builder
	switch {
	case s.refusedBeforeSending() && len(s.notActive) == 0:
		summary = fmt.Sprintf("The invocation will refuse to roll back %s: it would leave the prefix at different shard counts", s.scope())
		b.WriteString(s.splitDetail())
	case s.refusedBeforeSending():
		summary = fmt.Sprintf("The invocation will refuse to roll back %s", s.scope())
		fmt.Fprintf(&b, "Not every unfinished migration of the prefix is ACTIVE, and the coordinator allows a rollback only while it is "+
			"(422 %s). The action sends nothing in that case, rather than leave the prefix's groups at different shard counts:", client.CodeRollbackNotAllowed)
		s.writeList(&b, s.notActive, func(gm groupMigration) string { return notActiveAdvice(gm.m) })
		if len(s.active) > 0 {
			b.WriteString("\nACTIVE, and not rolled back because of the above:")
			s.writeList(&b, s.active, nil)
		}
	case len(s.notActive) > 0:
		summary = fmt.Sprintf("The invocation will be refused: the migration of %s is not ACTIVE", s.scope())
		fmt.Fprintf(&b, "The coordinator allows a rollback only while a migration is ACTIVE; it will answer 422 %s:", client.CodeRollbackNotAllowed)
		s.writeList(&b, s.notActive, func(gm groupMigration) string { return notActiveAdvice(gm.m) })
	case s.nothingToDo() && len(s.rolledBack) > 0:
		summary = fmt.Sprintf("The invocation will change nothing: the resharding of %s is already rolled back", s.scope())
		b.WriteString("Already ROLLED_BACK (the invocation succeeds without sending a rollback):")
		s.writeList(&b, s.rolledBack, nil)
	case s.nothingToDo():
		summary = fmt.Sprintf("The invocation will fail: %s has no migration to roll back", s.scope())
		b.WriteString(s.nothingDetail())
	default:
		summary = fmt.Sprintf("The invocation will roll back %d migration(s) of %s", len(s.active), s.scope())
		b.WriteString("Will send POST .../migrations/{reshardingId}/rollback for:")
		s.writeList(&b, s.active, func(gm groupMigration) string {
			return fmt.Sprintf("back to %d shards", gm.m.FromShardCount)
		})
		if len(s.rolledBack) > 0 {
			b.WriteString("\nAlready ROLLED_BACK, left as they are:")
			s.writeList(&b, s.rolledBack, nil)
		}
		if stranded := strandedShards(s.prefix, s.active); stranded != "" {
			b.WriteString("\n\n" + stranded)
		}
		if split := s.leavesSplit(); split != "" {
			b.WriteString("\n\n" + split)
		}
	}
	b.WriteString(s.goneNote())
	fmt.Fprintf(&b, "\n\nRead from the coordinator at plan time; the invocation reads again before it sends anything. It needs a "+
		"principal with the WRITE role, and is audited with requestedBy %q.", requestedBy)
	return summary, b.String()
}

func (s *rollbackSurvey) goneNote() string {
	if len(s.gone) == 0 {
		return ""
	}
	return fmt.Sprintf("\n\nSkipped, deleted while the action read the prefix (404 %s for its migrations): group(s) %q.",
		client.CodeGroupNotFound, s.gone)
}

func (s *rollbackSurvey) nothingDetail() string {
	var b strings.Builder
	b.WriteString("No migration is in progress")
	if len(s.idle) == 0 {
		fmt.Fprintf(&b, ": %s has no consumer group.", s.scope())
		return b.String()
	}
	b.WriteString(", and none was rolled back:")
	s.writeList(&b, s.idle, nil)
	b.WriteString("\nA completed (DEPRECATED) migration cannot be rolled back: to return to the old shard count, change shard_count " +
		"of redisstreamcoordinator_group_shard_count (a new resharding).")
	return b.String()
}

func (s *rollbackSurvey) writeList(b *strings.Builder, list []groupMigration, note func(groupMigration) string) {
	for _, gm := range list {
		fmt.Fprintf(b, "\n  - %s", gm)
		if note != nil {
			fmt.Fprintf(b, ": %s", note(gm))
		}
	}
}

func strandedShards(p string, ms []groupMigration) string {
	var added []string
	seen := map[string]bool{}
	for _, gm := range ms {
		if gm.m.ToShardCount > gm.m.FromShardCount {
			r := shardRange(p, gm.m.FromShardCount, gm.m.ToShardCount)
			if !seen[r] {
				seen[r] = true
				added = append(added, r)
			}
		}
	}
	if len(added) == 0 {
		return ""
	}
	return "Producers switched to the new shard count when the scale was accepted. Entries they already wrote to the added shards (" +
		strings.Join(added, ", ") + ") are stranded by the rollback: the coordinator no longer assigns those shards, so no consumer " +
		"reads them. Re-publish or drain them by hand if they matter."
}
