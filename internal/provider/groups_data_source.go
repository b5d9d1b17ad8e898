package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSourceWithConfigure = &groupsDataSource{}

// NewGroupsDataSource is the redisstreamcoordinator_groups data source.
func NewGroupsDataSource() datasource.DataSource { return &groupsDataSource{} }

type groupsDataSource struct{ dataSourceBase }

type groupsDataSourceModel struct {
	StreamPrefix types.String     `tfsdk:"stream_prefix"`
	Groups       []groupViewModel `tfsdk:"groups"`
}

func (d *groupsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_groups"
}

func (d *groupsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Lists every consumer group on the coordinator, or those of one stream prefix: the groups a scale of that prefix rescales together (`READ` role).",
		Attributes: map[string]schema.Attribute{
			"stream_prefix": schema.StringAttribute{
				MarkdownDescription: "Only list the groups under this stream prefix. Omit it to list every group. " +
					"A prefix without groups gives an empty list and a warning.",
				Optional:   true,
				Validators: lookupNameValidators("stream prefix"),
			},
			"groups": schema.ListNestedAttribute{
				MarkdownDescription: "The groups, ordered by stream prefix, then consumer group.",
				Computed:            true,
				NestedObject:        schema.NestedAttributeObject{Attributes: groupViewAttributes()},
			},
		},
	}
}

func (d *groupsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var prefix types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("stream_prefix"), &prefix)...)
	api := d.api(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	groups, err := api.Groups(ctx)
	if err != nil {
		summary := "Failed to list the coordinator's groups"
		if !prefix.IsNull() {
			summary = fmt.Sprintf("Failed to list the groups under stream prefix %q", prefix.ValueString())
		}
		addAPIError(&resp.Diagnostics, summary, err, "")
		return
	}
	model := groupsDataSourceModel{StreamPrefix: prefix, Groups: []groupViewModel{}}
	for _, g := range groupsUnder(groups, prefix) {
		model.Groups = append(model.Groups, newGroupViewModel(g))
	}
	if !prefix.IsNull() && len(model.Groups) == 0 {
		// Not an error, but never silent: a misspelt prefix would look like "no groups".
		resp.Diagnostics.AddAttributeWarning(path.Root("stream_prefix"), fmt.Sprintf("No groups under stream prefix %q", prefix.ValueString()),
			fmt.Sprintf("The coordinator has no group under stream prefix %q, so groups is empty. Prefixes are case-sensitive; "+
				"omit stream_prefix to list every group.", prefix.ValueString()))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &model)...)
}
