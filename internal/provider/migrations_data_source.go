package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSourceWithConfigure = &migrationsDataSource{}

// NewMigrationsDataSource is the redisstreamcoordinator_migrations data source.
func NewMigrationsDataSource() datasource.DataSource { return &migrationsDataSource{} }

type migrationsDataSource struct{ dataSourceBase }

type migrationsModel struct {
	StreamPrefix       string           `tfsdk:"stream_prefix"`
	ConsumerGroup      string           `tfsdk:"consumer_group"`
	Migrations         []migrationModel `tfsdk:"migrations"`
	ActiveReshardingID types.String     `tfsdk:"active_resharding_id"`
}

func (d *migrationsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_migrations"
}

func (d *migrationsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads a group's migration (resharding) history (`READ` role).",
		Attributes: withGroupLookup(map[string]schema.Attribute{
			"migrations": schema.ListNestedAttribute{
				MarkdownDescription: "Every migration of the group, oldest first (a scale to the current count is not stored).",
				Computed:            true,
				NestedObject:        schema.NestedAttributeObject{Attributes: migrationAttributes()},
			},
			"active_resharding_id": schema.StringAttribute{
				MarkdownDescription: "`resharding_id` of the migration in progress, or null when none is. Further scales of the " +
					"stream prefix are refused (`409 ACTIVE_MIGRATION_EXISTS`) until it finishes.",
				Computed: true,
			},
		}),
	}
}

func (d *migrationsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	p, g := readGroupLookup(ctx, req, &resp.Diagnostics)
	api := d.api(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	h, err := api.Migrations(ctx, p, g)
	if err != nil {
		addGroupReadError(&resp.Diagnostics, "migrations", p, g, err)
		return
	}
	model := migrationsModel{
		StreamPrefix:       p,
		ConsumerGroup:      g,
		Migrations:         make([]migrationModel, 0, len(h.Migrations)),
		ActiveReshardingID: types.StringNull(),
	}
	for i := range h.Migrations {
		model.Migrations = append(model.Migrations, *newMigrationModel(&h.Migrations[i]))
	}
	if h.ActiveReshardingID != "" {
		model.ActiveReshardingID = types.StringValue(h.ActiveReshardingID)
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &model)...)
}
