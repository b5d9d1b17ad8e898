package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

type assignmentsModel struct {
	StreamPrefix        string             `tfsdk:"stream_prefix"`
	ConsumerGroup       string             `tfsdk:"consumer_group"`
	TargetAssignment    map[string][]int64 `tfsdk:"target_assignment"`
	CurrentAssignments  map[string][]int64 `tfsdk:"current_assignments"`
	RevokeProgress      map[string][]int64 `tfsdk:"revoke_progress"`
	InvariantViolations []string           `tfsdk:"invariant_violations"`
}

// NewAssignmentsDataSource is the redisstreamcoordinator_assignments data source.
func NewAssignmentsDataSource() datasource.DataSource {
	shardMap := func(desc string) schema.MapAttribute {
		return schema.MapAttribute{MarkdownDescription: desc, Computed: true, ElementType: types.ListType{ElemType: types.Int64Type}}
	}
	return &readDataSource{
		name: "assignments", lookup: true,
		description: "Reads a group's shard assignments (`READ` role): target, current, revokes in progress and broken invariants.",
		attrs: map[string]schema.Attribute{
			"target_assignment": shardMap("Member id → shard indexes (ascending) the coordinator assigns to that member."),
			"current_assignments": shardMap("Member id → shard indexes (ascending) the member reports owning now, for every member. " +
				"It equals `target_assignment` once the group has converged."),
			"revoke_progress": shardMap("Member id → shard indexes (ascending) the member is still revoking; only members with " +
				"revokes in progress appear, so an empty map means no handoff is pending."),
			"invariant_violations": schema.ListAttribute{
				MarkdownDescription: "Assignment invariants the coordinator found broken (for example a shard owned by two members), " +
					"as its own messages. Empty when the group is healthy.",
				Computed:    true,
				ElementType: types.StringType,
			},
		},
		read: lookupRead("assignments", (*client.Client).Assignments, func(p, g string, a *client.Assignments) any {
			return assignmentsModel{
				StreamPrefix:        p,
				ConsumerGroup:       g,
				TargetAssignment:    shardIndexMap(a.TargetAssignment),
				CurrentAssignments:  shardIndexMap(a.CurrentAssignments),
				RevokeProgress:      shardIndexMap(a.RevokeProgress),
				InvariantViolations: append([]string{}, a.InvariantViolations...),
			}
		}),
	}
}
