package provider

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

// reshardingModel is the planned impact of a shard count change.
type reshardingModel struct {
	FromShardCount       types.Int64   `tfsdk:"from_shard_count"`
	ToShardCount         types.Int64   `tfsdk:"to_shard_count"`
	AffectedGroups       types.Map     `tfsdk:"affected_groups"`
	MovedKeyPercent      types.Float64 `tfsdk:"moved_key_percent"`
	CompletesByItself    types.Bool    `tfsdk:"completes_by_itself"`
	BlockedBy            types.String  `tfsdk:"blocked_by"`
	BasisMetadataVersion types.Int64   `tfsdk:"basis_metadata_version"`
	PlanCheck            types.String  `tfsdk:"plan_check"`
}

var reshardingAttrTypes = map[string]attr.Type{
	"from_shard_count":       types.Int64Type,
	"to_shard_count":         types.Int64Type,
	"affected_groups":        types.MapType{ElemType: types.Int64Type},
	"moved_key_percent":      types.Float64Type,
	"completes_by_itself":    types.BoolType,
	"blocked_by":             types.StringType,
	"basis_metadata_version": types.Int64Type,
	"plan_check":             types.StringType,
}

const (
	planCheckRead         = "read from the coordinator at plan time"
	planCheckGroupCreated = "partly deferred: the group is created in this apply, so its count is the planned initial_shard_count and its siblings were read at plan time"
)

func reshardingSchema() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "The planned change's impact and a saved plan's [basis](../guides/how-it-works#saved-plans) (known after apply for a new resource); after apply, the last change's; null when nothing changes.",
		Computed:            true,
		Attributes: map[string]schema.Attribute{
			"from_shard_count": schema.Int64Attribute{
				MarkdownDescription: "The group's shard count before the change.",
				Computed:            true,
			},
			"to_shard_count": schema.Int64Attribute{
				MarkdownDescription: "The target shard count (`shard_count`).",
				Computed:            true,
			},
			"affected_groups": schema.MapAttribute{
				MarkdownDescription: "Every group of the stream prefix the scale rescales, with its shard count before the change.",
				ElementType:         types.Int64Type,
				Computed:            true,
			},
			"moved_key_percent": schema.Float64Attribute{
				MarkdownDescription: "Percent of partition keys (two decimals) that change shard: 4 → 8 moves 50, 8 → 12 moves 66.67, to or from 0 moves 100.",
				Computed:            true,
			},
			"completes_by_itself": schema.BoolAttribute{
				MarkdownDescription: "Whether the migration completes without anyone acting: `false` for a scale-out of a group with no live consumer. Known only after apply for a scale-out (consumers join and leave before it) and when other groups' migrations decide it ([when](../guides/how-it-works#what-a-plan-reads)).",
				Computed:            true,
			},
			"blocked_by": schema.StringAttribute{
				MarkdownDescription: "What the change waits for, or why it cannot complete by itself; null when nothing does.",
				Computed:            true,
			},
			"basis_metadata_version": schema.Int64Attribute{
				MarkdownDescription: "The group's `metadataVersion` the plan is based on: a lower one at apply fails. Null before the group exists.",
				Computed:            true,
			},
			"plan_check": schema.StringAttribute{
				MarkdownDescription: "How the preview was obtained: read at plan time, partly deferred (its group is created in this apply), skipped (configuration unknown), awaiting a migration under way, or computed at apply.",
				Computed:            true,
			},
		},
	}
}

func reshardingNull() types.Object { return types.ObjectNull(reshardingAttrTypes) }

// preview is the one preview of a plan: prefix.Decide's decision for in,
// Self going from `from` shards (-1: unknown). Every plan path shows it.
type preview struct {
	m         reshardingModel
	completes bool
	blockedBy string
	// moving are the groups whose migrations or liveness move by themselves:
	// Terraform's re-plan during apply must agree, so the outcome is left to the apply.
	moving []string
}

func previewOf(in prefix.Input, d prefix.Decision, from int32, basis types.Int64, check string) preview {
	pv := preview{completes: len(d.NoConsumer) == 0, blockedBy: blockedBy(in, d), moving: prefix.MovesByItself(in)}
	pv.m = reshardingModel{
		FromShardCount: types.Int64Unknown(), ToShardCount: types.Int64Value(int64(in.Target)), AffectedGroups: affectedGroups(in.Record),
		MovedKeyPercent: types.Float64Unknown(), CompletesByItself: types.BoolValue(pv.completes), BlockedBy: types.StringNull(),
		BasisMetadataVersion: basis, PlanCheck: types.StringValue(check),
	}
	if from >= 0 {
		pv.m.FromShardCount, pv.m.MovedKeyPercent = types.Int64Value(int64(from)), types.Float64Value(movedKeyPercent(from, in.Target))
	}
	if from == in.Target {
		// A split prefix: this group has the count, others move.
		moved := 0.0
		for _, gi := range in.Record.Split(in.Target) {
			moved = math.Max(moved, movedKeyPercent(gi.ShardCount, in.Target))
		}
		pv.m.MovedKeyPercent = types.Float64Value(moved)
	}
	if pv.blockedBy != "" {
		pv.m.BlockedBy = types.StringValue(pv.blockedBy)
	}
	if len(pv.moving) > 0 {
		pv.m.CompletesByItself, pv.m.BlockedBy = types.BoolUnknown(), types.StringUnknown()
	}
	return pv
}

// tail closes a warning with what the change waits for, as read at plan time.
func (pv preview) tail() string {
	by := "completes by itself"
	if !pv.completes {
		by = "does not complete by itself"
	}
	if len(pv.moving) > 0 {
		now := "nothing stands in the way"
		if pv.blockedBy != "" {
			now = "the change " + pv.blockedBy
		}
		return fmt.Sprintf("\n\nresharding.completes_by_itself and resharding.blocked_by are known after apply: they depend on whether "+
			"group(s) %s have a live consumer and on their migrations under way, which change by themselves between this plan and "+
			"the apply (consumers join and leave, migrations complete) without making the plan stale. As read at plan time, %s, and "+
			"it %s.", quoted(pv.moving), now, by)
	}
	s := ""
	if pv.blockedBy != "" {
		s = "\n\nThe change " + pv.blockedBy + "."
	}
	if !pv.completes {
		s += " It " + by + "."
	}
	return s
}

func (m reshardingModel) object() types.Object {
	v, diags := types.ObjectValueFrom(context.Background(), reshardingAttrTypes, m)
	if diags.HasError() {
		panic(fmt.Sprintf("resharding object: %v", diags))
	}
	return v
}

func movedKeyPercent(from, to int32) float64 {
	return math.Round(routing.MovedKeyShare(int(from), int(to))*10000) / 100
}

func affectedGroups(rec prefix.Record) types.Map {
	counts := map[string]attr.Value{}
	for _, gi := range rec.Groups {
		counts[gi.ConsumerGroup] = types.Int64Value(int64(gi.ShardCount))
	}
	return types.MapValueMust(types.Int64Type, counts)
}

// quoted lists names, quoted, for a diagnostic.
func quoted(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func describeMigration(gi client.Group) string {
	am := gi.ActiveMigration
	return fmt.Sprintf("migration %s of group %q (%d→%d shards, %s)", am.ReshardingID, gi.ConsumerGroup, am.FromShardCount, am.ToShardCount, am.State)
}

// The coordinator reports EMPTY exactly when a group has no live member.
func hasLiveConsumer(gi client.Group) bool { return gi.State != client.GroupEmpty }

// blockedBy tells what decision d waits for; the apply runs the same steps.
func blockedBy(in prefix.Input, d prefix.Decision) string {
	var waits []string
	for _, st := range d.Steps {
		gi := in.Record.Group(st.Group)
		switch {
		case st.Kind == prefix.WaitOthers:
			for _, gi := range st.Blocking {
				waits = append(waits, "waits for "+describeMigration(gi)+" to finish first")
			}
		case st.Kind == prefix.Adopt && prefix.Unfinished(gi) == nil:
			// A known migration that ended: the wait reads how.
		case st.Kind == prefix.Adopt && in.WaitOnly && st.Group == in.Self:
			waits = append(waits, underWay(gi, gi.ActiveMigration))
		case st.Kind == prefix.Adopt:
			waits = append(waits, "takes over "+describeMigration(*gi)+", already heading to the target")
		case st.Resume:
			waits = append(waits, "resumes "+describeMigration(*gi)+" with its own target")
		case st.Kind == prefix.Rollback:
			waits = append(waits, "rolls back "+describeMigration(*gi)+" (rollback_on_revert)")
		}
	}
	if len(d.NoConsumer) > 0 {
		waits = append(waits, fmt.Sprintf("scale-out of group(s) %s, which have no live consumer: their migrations stay ACTIVE "+
			"(producers already route to %d shards) until a consumer joins, and further count changes of the prefix are refused until then",
			quoted(d.NoConsumer), in.Target))
	}
	return strings.Join(waits, "; ")
}

// previewFatal words a refusal as the apply does (refusalText).
func previewFatal(diags *diag.Diagnostics, p string, target int32, rollbackOnRevert bool, r *prefix.Refusal, before string) {
	summary, detail := refusalText(p, target, rollbackOnRevert, r)
	diags.AddAttributeError(path.Root("shard_count"), summary, before+detail+"\n\nNothing was sent to the coordinator.")
}

const planCheckUnderWay = "a migration to this count is already under way (read from the coordinator at plan time): applying waits for it and sends no scale"

// underWayMigration returns the group's migration under way to its own count, or nil.
func underWayMigration(g *client.Group) *client.Migration {
	if g == nil {
		return nil
	}
	am := g.ActiveMigration
	if am.Finished() || am.State == client.MigrationPreparing || am.ToShardCount != g.ShardCount {
		return nil
	}
	return am
}

func underWaySince(am *client.Migration) string {
	if am.CreatedAt.IsZero() {
		return "an unknown time (the coordinator sent no createdAt)"
	}
	return am.CreatedAt.UTC().Format(time.RFC3339)
}

// underWay says, from the group record alone, since when its migration am is
// under way and what it still waits for.
func underWay(g *client.Group, am *client.Migration) string {
	waits := "the consumers to release the shards they hand over"
	switch {
	case am.State == client.MigrationActive && !hasLiveConsumer(*g):
		waits = "the coordinator's next loop tick (a scale-in with no live consumer skips the revoke)"
	case am.State == client.MigrationActive:
		waits = "the group's live consumers to converge to the new assignment"
	case am.ToShardCount < am.FromShardCount:
		waits = fmt.Sprintf("the removed shards %s to be released by the consumers and drained (no pending entries, no lag in Redis)",
			shardRange(g.StreamPrefix, am.ToShardCount, am.FromShardCount))
	}
	return fmt.Sprintf("migration %s (%d→%d shards) is already under way since %s, now %s: it waits for %s",
		am.ReshardingID, am.FromShardCount, am.ToShardCount, underWaySince(am), am.State, waits)
}
