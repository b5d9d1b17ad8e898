package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
)

var _ datasource.DataSourceWithConfigure = &healthDataSource{}

// NewHealthDataSource is the redisstreamcoordinator_health data source.
func NewHealthDataSource() datasource.DataSource { return &healthDataSource{} }

type healthDataSource struct{ dataSourceBase }

type healthModel struct {
	Status        string `tfsdk:"status"`
	CoordinatorID string `tfsdk:"coordinator_id"`
	Redis         string `tfsdk:"redis"`
	Loop          string `tfsdk:"loop"`
}

func (d *healthDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_health"
}

func (d *healthDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads the coordinator's health (`READ` role). Test `status` in a `check` block (to warn) or a `postcondition` (to fail a plan).",
		Attributes: map[string]schema.Attribute{
			"status": schema.StringAttribute{
				MarkdownDescription: "`UP`, or `DEGRADED` when Redis is `DOWN`. The coordinator never reports `DOWN` as its status: " +
					"an unreachable coordinator fails the read instead.",
				Computed: true,
			},
			"coordinator_id": schema.StringAttribute{
				MarkdownDescription: "Id of the coordinator instance that answered (`COORDINATOR_ID`, default `local-coordinator`).",
				Computed:            true,
			},
			"redis": schema.StringAttribute{
				MarkdownDescription: "`UP`, `DOWN`, `UNKNOWN` (not checked yet; may read so on the first call) or `NOT_CONFIGURED` (no Redis).",
				Computed:            true,
			},
			"loop": schema.StringAttribute{
				MarkdownDescription: "State of the coordinator's background loop (leases, revokes, migrations): `UP`.",
				Computed:            true,
			},
		},
	}
}

func (d *healthDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	api := d.api(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	h, err := api.Health(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, "Failed to read the coordinator's health", err, "")
		return
	}
	model := healthModel{Status: h.Status, CoordinatorID: h.CoordinatorID, Redis: h.Redis, Loop: h.Loop}
	resp.Diagnostics.Append(resp.State.Set(ctx, &model)...)
}
