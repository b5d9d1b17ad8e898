package provider

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Data sources must find groups created outside Terraform under any name.
func lookupNameValidators(kind string) []validator.String {
	return []validator.String{nameValidator{kind: kind}}
}

// withGroupLookup adds the names the data source looks the group up by.
func withGroupLookup(attrs map[string]schema.Attribute) map[string]schema.Attribute {
	attrs["stream_prefix"] = schema.StringAttribute{
		MarkdownDescription: "Stream prefix of the group; shard `i` is the Redis stream `<stream_prefix>:<i>`.",
		Required:            true,
		Validators:          lookupNameValidators(kindStreamPrefix),
	}
	attrs["consumer_group"] = schema.StringAttribute{
		MarkdownDescription: "Consumer group name. A group is the pair `{stream_prefix, consumer_group}`.",
		Required:            true,
		Validators:          lookupNameValidators(kindConsumerGroup),
	}
	return attrs
}

func readGroupLookup(ctx context.Context, req datasource.ReadRequest, group bool, diags *diag.Diagnostics) (p, g string) {
	var prefix, name types.String
	diags.Append(req.Config.GetAttribute(ctx, path.Root("stream_prefix"), &prefix)...)
	if group {
		diags.Append(req.Config.GetAttribute(ctx, path.Root("consumer_group"), &name)...)
	}
	return prefix.ValueString(), name.ValueString()
}

var _ datasource.DataSourceWithConfigure = &readDataSource{}

// readDataSource reads one answer of the coordinator into its model; with
// lookup, about the group its stream_prefix and consumer_group name.
type readDataSource struct {
	pd                *providerData
	name, description string
	// filter: p is the data source's own optional stream_prefix, "" when unset.
	lookup, filter bool
	attrs          map[string]schema.Attribute
	// read reports its failure in diags.
	read func(ctx context.Context, api *client.Client, p, g string, diags *diag.Diagnostics) any
}

func (d *readDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.pd = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *readDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + d.name
}

func (d *readDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := d.attrs
	if d.lookup {
		attrs = withGroupLookup(attrs)
	}
	resp.Schema = schema.Schema{MarkdownDescription: d.description, Attributes: attrs}
}

func (d *readDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var p, g string
	if d.lookup || d.filter {
		p, g = readGroupLookup(ctx, req, d.lookup, &resp.Diagnostics)
	}
	api := d.pd.configuredAPI(&resp.Diagnostics, "this data source was read", "This data source is read while planning, but ")
	if resp.Diagnostics.HasError() {
		return
	}
	if model := d.read(ctx, api, p, g, &resp.Diagnostics); !resp.Diagnostics.HasError() {
		resp.Diagnostics.Append(resp.State.Set(ctx, model)...)
	}
}

// Every attribute a data source reads is computed; these build the plain ones.
func computedString(desc string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
}

func computedInt64(desc string) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: desc, Computed: true}
}

func computedBool(desc string) schema.BoolAttribute {
	return schema.BoolAttribute{MarkdownDescription: desc, Computed: true}
}

// A missing group is an error: a typo must not make a postcondition or a
// producer configuration silently see nothing.
func addGroupReadError(diags *diag.Diagnostics, what, p, g string, err error) {
	if client.IsNotFound(err) {
		addAPIError(diags, fmt.Sprintf("Group %q under stream prefix %q not found", g, p), err, fmt.Sprintf(
			"The coordinator has no group %q under stream prefix %q, so its %s cannot be read. Names are case-sensitive; "+
				"the redisstreamcoordinator_groups data source lists every group. If the group is created in the same "+
				"configuration, reference the resource's attributes (for example redisstreamcoordinator_group.<name>.consumer_group) "+
				"so the read waits for the create.", g, p, what))
		return
	}
	addAPIError(diags, fmt.Sprintf("Failed to read the %s of group %q under stream prefix %q", what, g, p), err, "")
}

// lookupRead is a group data source's read: get the answer about group p/g,
// report a failure with addGroupReadError, else build the model from it.
func lookupRead[T any](what string, get func(*client.Client, context.Context, string, string) (T, error),
	model func(p, g string, v T) any,
) func(context.Context, *client.Client, string, string, *diag.Diagnostics) any {
	return func(ctx context.Context, api *client.Client, p, g string, diags *diag.Diagnostics) any {
		v, err := get(api, ctx, p, g)
		if err != nil {
			addGroupReadError(diags, what, p, g, err)
			return nil
		}
		return model(p, g, v)
	}
}

// groupsUnder keeps the groups of prefix (every group when it is null),
// ordered by stream prefix, then consumer group.
func groupsUnder(all []client.Group, prefix types.String) []*client.Group {
	var out []*client.Group
	for i := range all {
		if prefix.IsNull() || all[i].StreamPrefix == prefix.ValueString() {
			out = append(out, &all[i])
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.StreamPrefix < b.StreamPrefix || a.StreamPrefix == b.StreamPrefix && a.ConsumerGroup < b.ConsumerGroup
	})
	return out
}

// timeValue: null rather than a misleading zero date.
func timeValue(t client.Time) types.String {
	if t.IsZero() {
		return types.StringNull()
	}
	return types.StringValue(t.UTC().Format(time.RFC3339Nano))
}

// Never nil, so length() and contains() work on it in conditions.
func shardIndexes(shards []client.ShardID) []int64 {
	out := make([]int64, 0, len(shards))
	for _, s := range shards {
		out = append(out, int64(s.ShardIndex))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func shardIndexMap(m map[string][]client.ShardID) map[string][]int64 {
	out := make(map[string][]int64, len(m))
	for member, shards := range m {
		out[member] = shardIndexes(shards)
	}
	return out
}

type migrationModel struct {
	ReshardingID   string       `tfsdk:"resharding_id"`
	FromShardCount int64        `tfsdk:"from_shard_count"`
	ToShardCount   int64        `tfsdk:"to_shard_count"`
	State          string       `tfsdk:"state"`
	CreatedAt      types.String `tfsdk:"created_at"`
	UpdatedAt      types.String `tfsdk:"updated_at"`
}

func newMigrationModel(m *client.Migration) *migrationModel {
	if m == nil {
		return nil
	}
	return &migrationModel{
		ReshardingID:   m.ReshardingID,
		FromShardCount: int64(m.FromShardCount),
		ToShardCount:   int64(m.ToShardCount),
		State:          string(m.State),
		CreatedAt:      timeValue(m.CreatedAt),
		UpdatedAt:      timeValue(m.UpdatedAt),
	}
}

func migrationAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"resharding_id":    computedString("Migration id, `reshard-<uuid>`."),
		"from_shard_count": computedInt64("Shard count before the migration."),
		"to_shard_count":   computedInt64("Shard count the migration moves to; producers already route with it."),
		"state":            computedString("`PREPARING`, `ACTIVE`, `DRAINING`, `DEPRECATED` (finished) or `ROLLED_BACK`."),
		"created_at":       computedString("When the migration was created (RFC 3339, UTC)."),
		"updated_at":       computedString("When the migration last changed state (RFC 3339, UTC)."),
	}
}

type groupViewModel struct {
	ID                       string           `tfsdk:"id"`
	StreamPrefix             string           `tfsdk:"stream_prefix"`
	ConsumerGroup            string           `tfsdk:"consumer_group"`
	ShardCount               int64            `tfsdk:"shard_count"`
	State                    string           `tfsdk:"state"`
	GroupEpoch               int64            `tfsdk:"group_epoch"`
	AssignmentEpoch          int64            `tfsdk:"assignment_epoch"`
	MetadataVersion          int64            `tfsdk:"metadata_version"`
	ActiveMigration          *migrationModel  `tfsdk:"active_migration"`
	TargetAssignmentSummary  map[string]int64 `tfsdk:"target_assignment_summary"`
	CurrentAssignmentSummary map[string]int64 `tfsdk:"current_assignment_summary"`
}

func newGroupViewModel(g *client.Group) groupViewModel {
	return groupViewModel{
		ID:                       groupID(g.StreamPrefix, g.ConsumerGroup),
		StreamPrefix:             g.StreamPrefix,
		ConsumerGroup:            g.ConsumerGroup,
		ShardCount:               int64(g.ShardCount),
		State:                    string(g.State),
		GroupEpoch:               g.GroupEpoch,
		AssignmentEpoch:          g.AssignmentEpoch,
		MetadataVersion:          g.MetadataVersion,
		ActiveMigration:          newMigrationModel(g.ActiveMigration),
		TargetAssignmentSummary:  countMap(g.TargetAssignmentSummary),
		CurrentAssignmentSummary: countMap(g.CurrentAssignmentSummary),
	}
}

func countMap(m map[string]int32) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = int64(v)
	}
	return out
}

// groupViewAttributes: the group data source replaces the names with its lookup.
func groupViewAttributes() map[string]schema.Attribute {
	summary := func(desc string) schema.MapAttribute {
		return schema.MapAttribute{MarkdownDescription: desc, Computed: true, ElementType: types.Int64Type}
	}
	attrs := map[string]schema.Attribute{
		"id":               computedString("`{stream_prefix}/{consumer_group}`."),
		"shard_count":      computedInt64("Current shard count, what producers route with; it switches when a scale is accepted, before the migration finishes. `0`: drained, no route."),
		"state":            computedString("`EMPTY` (no members), `RECONCILING` (members moving to the target assignment) or `STABLE`."),
		"group_epoch":      computedInt64("Group epoch; bumped by every membership or metadata change."),
		"assignment_epoch": computedInt64("Epoch of the current target assignment."),
		"metadata_version": computedInt64("Version of the group's metadata; it rises with every change of the group, consumers joining and leaving included."),
		"active_migration": schema.SingleNestedAttribute{
			MarkdownDescription: "The migration in progress, or null: a scale is finished only when this is null.",
			Computed:            true,
			Attributes:          migrationAttributes(),
		},
		"target_assignment_summary":  summary("Member id → number of shards the coordinator wants that member to own."),
		"current_assignment_summary": summary("Member id → number of shards that member reports owning now."),
	}
	attrs["stream_prefix"] = computedString("Stream prefix of the group.")
	attrs["consumer_group"] = computedString("Consumer group name.")
	return attrs
}
