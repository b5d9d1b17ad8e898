package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

type migrationsModel struct {
	StreamPrefix       string           `tfsdk:"stream_prefix"`
	ConsumerGroup      string           `tfsdk:"consumer_group"`
	Migrations         []migrationModel `tfsdk:"migrations"`
	ActiveReshardingID types.String     `tfsdk:"active_resharding_id"`
}

// NewMigrationsDataSource is the redisstreamcoordinator_migrations data source.
func NewMigrationsDataSource() datasource.DataSource {
	return &readDataSource{
		name: "migrations", lookup: true,
		description: "Reads a group's migration (resharding) history (`READ` role).",
		attrs: map[string]schema.Attribute{
			"migrations": schema.ListNestedAttribute{
				MarkdownDescription: "Every migration of the group, oldest first (a scale to the current count is not stored).",
				Computed:            true,
				NestedObject:        schema.NestedAttributeObject{Attributes: migrationAttributes()},
			},
			"active_resharding_id": computedString("`resharding_id` of the migration in progress, or null when none is. Further scales of the " +
				"stream prefix are refused (`409 ACTIVE_MIGRATION_EXISTS`) until it finishes."),
		},
		read: lookupRead("migrations", (*client.Client).Migrations, migrationsOf),
	}
}

func migrationsOf(p, g string, h *client.MigrationHistory) any {
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
	return model
}
