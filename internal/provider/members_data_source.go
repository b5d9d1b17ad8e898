package provider

import (
	"sort"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

type membersModel struct {
	StreamPrefix  string        `tfsdk:"stream_prefix"`
	ConsumerGroup string        `tfsdk:"consumer_group"`
	Members       []memberModel `tfsdk:"members"`
	LiveCount     int64         `tfsdk:"live_count"`
}

type memberModel struct {
	MemberID              string       `tfsdk:"member_id"`
	MemberName            string       `tfsdk:"member_name"`
	State                 string       `tfsdk:"state"`
	Live                  bool         `tfsdk:"live"`
	MemberEpoch           int64        `tfsdk:"member_epoch"`
	MetadataVersion       int64        `tfsdk:"metadata_version"`
	RuntimeMaxConcurrency int64        `tfsdk:"runtime_max_concurrency"`
	ActiveConsumerWorkers int64        `tfsdk:"active_consumer_workers"`
	CurrentAssignment     []int64      `tfsdk:"current_assignment"`
	GrantedAssignment     []int64      `tfsdk:"granted_assignment"`
	Revoking              []int64      `tfsdk:"revoking"`
	LastHeartbeatAt       types.String `tfsdk:"last_heartbeat_at"`
	MemberLeaseExpiresAt  types.String `tfsdk:"member_lease_expires_at"`
	RebalanceTimeoutMs    int64        `tfsdk:"rebalance_timeout_ms"`
	RebalanceDeadlineAt   types.String `tfsdk:"rebalance_deadline_at"`
}

func newMembersModel(p, g string, members []client.Member, now time.Time) membersModel {
	model := membersModel{StreamPrefix: p, ConsumerGroup: g, Members: make([]memberModel, 0, len(members))}
	for _, m := range members {
		live := m.Live(now)
		if live {
			model.LiveCount++
		}
		model.Members = append(model.Members, memberModel{
			MemberID:              m.MemberID,
			MemberName:            m.MemberName,
			State:                 string(m.State),
			Live:                  live,
			MemberEpoch:           m.MemberEpoch,
			MetadataVersion:       m.MetadataVersion,
			RuntimeMaxConcurrency: int64(m.RuntimeMaxConcurrency),
			ActiveConsumerWorkers: int64(m.ActiveConsumerWorkers),
			CurrentAssignment:     shardIndexes(m.CurrentAssignment),
			GrantedAssignment:     shardIndexes(m.GrantedAssignment),
			Revoking:              shardIndexes(m.Revoking),
			LastHeartbeatAt:       timeValue(m.LastHeartbeatAt),
			MemberLeaseExpiresAt:  timeValue(m.MemberLeaseExpiresAt),
			RebalanceTimeoutMs:    m.RebalanceTimeoutMs,
			RebalanceDeadlineAt:   timeValue(m.RebalanceDeadlineAt),
		})
	}
	sort.Slice(model.Members, func(i, j int) bool { return model.Members[i].MemberID < model.Members[j].MemberID })
	return model
}

// NewMembersDataSource is the redisstreamcoordinator_members data source.
func NewMembersDataSource() datasource.DataSource {
	shards := func(desc string) schema.ListAttribute {
		return schema.ListAttribute{MarkdownDescription: desc, Computed: true, ElementType: types.Int64Type}
	}
	return &readDataSource{
		name: "members", lookup: true,
		description: "Reads a group's members, the consumers that heartbeat to the coordinator (`READ` role).",
		attrs: map[string]schema.Attribute{
			"live_count": computedInt64("Number of live members; a scale-out cannot finish while it is 0."),
			"members": schema.ListNestedAttribute{
				MarkdownDescription: "Every member the coordinator lists (gone ones for 10 minutes after their last heartbeat), by `member_id`.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"member_id":               computedString("Member id the consumer chose."),
					"member_name":             computedString("Human-readable member name the consumer reported."),
					"state":                   computedString("`STARTING`, `ACTIVE`, `LEAVING`, `EXPIRED` or `FENCED`."),
					"live":                    computedBool("`ACTIVE` or `STARTING` with an unexpired lease, when read. Live members block a non-forced delete and let scale-outs finish."),
					"member_epoch":            computedInt64("Member epoch; bumped whenever the coordinator gives the member a new assignment."),
					"metadata_version":        computedInt64("Routing metadata version the member last acknowledged."),
					"runtime_max_concurrency": computedInt64("Maximum concurrency the member declared."),
					"active_consumer_workers": computedInt64("Consumer workers the member reports running."),
					"current_assignment":      shards("Shard indexes (ascending) the member reports owning."),
					"granted_assignment":      shards("Shard indexes (ascending) the coordinator has granted the member."),
					"revoking":                shards("Shard indexes (ascending) the member is giving up."),
					"last_heartbeat_at":       computedString("Time of the member's last heartbeat (RFC 3339, UTC)."),
					"member_lease_expires_at": computedString("When the member's lease runs out without another heartbeat (RFC 3339, UTC)."),
					"rebalance_timeout_ms":    computedInt64("How long the member may take to revoke shards before it is fenced, in milliseconds."),
					"rebalance_deadline_at":   computedString("Deadline of the revoke in progress (RFC 3339, UTC), or null."),
				}},
			},
		},
		read: lookupRead("members", (*client.Client).Members, func(p, g string, members []client.Member) any {
			return newMembersModel(p, g, members, time.Now())
		}),
	}
}
