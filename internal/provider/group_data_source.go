package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// NewGroupDataSource is the redisstreamcoordinator_group data source.
func NewGroupDataSource() datasource.DataSource {
	return &readDataSource{
		name: "group", lookup: true, attrs: groupViewAttributes(),
		description: "Reads one consumer group's metadata as the coordinator holds it now: shard count, assignment state, epochs and the migration in progress (`READ` role). A missing group is an error.",
		read: func(ctx context.Context, api *client.Client, p, g string, diags *diag.Diagnostics) any {
			group, err := api.GetGroup(ctx, p, g)
			if err != nil {
				addGroupReadError(diags, "metadata", p, g, err)
				return nil
			}
			return newGroupViewModel(group)
		},
	}
}
