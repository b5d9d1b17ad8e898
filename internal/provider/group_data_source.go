package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
)

var _ datasource.DataSourceWithConfigure = &groupDataSource{}

// NewGroupDataSource is the redisstreamcoordinator_group data source.
func NewGroupDataSource() datasource.DataSource { return &groupDataSource{} }

type groupDataSource struct{ dataSourceBase }

func (d *groupDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_group"
}

func (d *groupDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads one consumer group's metadata as the coordinator holds it now: shard count, assignment state, epochs and the migration in progress (`READ` role). A missing group is an error.",
		Attributes:          groupViewAttributes(true),
	}
}

func (d *groupDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	p, g := readGroupLookup(ctx, req, &resp.Diagnostics)
	api := d.api(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	group, err := api.GetGroup(ctx, p, g)
	if err != nil {
		addGroupReadError(&resp.Diagnostics, "metadata", p, g, err)
		return
	}
	model := newGroupViewModel(group)
	resp.Diagnostics.Append(resp.State.Set(ctx, &model)...)
}
