package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// NewGroupDataSource is the redisstreamcoordinator_group data source.
func NewGroupDataSource() datasource.DataSource {
	return &readDataSource{
		name: "group", lookup: true, attrs: groupViewAttributes(),
		description: "Reads one consumer group's metadata as the coordinator holds it now: shard count, assignment state, epochs and the migration in progress (`READ` role). A missing group is an error.",
		read:        lookupRead("metadata", (*client.Client).GetGroup, func(_, _ string, group *client.Group) any { return newGroupViewModel(group) }),
	}
}
