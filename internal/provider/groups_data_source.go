package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

type groupsDataSourceModel struct {
	StreamPrefix types.String     `tfsdk:"stream_prefix"`
	Groups       []groupViewModel `tfsdk:"groups"`
}

// NewGroupsDataSource is the redisstreamcoordinator_groups data source.
func NewGroupsDataSource() datasource.DataSource {
	return &readDataSource{
		name: "groups", filter: true, read: readGroups,
		description: "Lists every consumer group on the coordinator, or those of one stream prefix: the groups a scale of that prefix rescales together (`READ` role).",
		attrs: map[string]schema.Attribute{
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

// readGroups: p is "" when stream_prefix is unset (a set one is never blank).
func readGroups(ctx context.Context, api *client.Client, p, _ string, diags *diag.Diagnostics) any {
	prefix := types.StringNull()
	if p != "" {
		prefix = types.StringValue(p)
	}
	groups, err := api.Groups(ctx)
	if err != nil {
		summary := "Failed to list the coordinator's groups"
		if p != "" {
			summary = fmt.Sprintf("Failed to list the groups under stream prefix %q", p)
		}
		addAPIError(diags, summary, err, "")
		return nil
	}
	model := groupsDataSourceModel{StreamPrefix: prefix, Groups: []groupViewModel{}}
	for _, g := range groupsUnder(groups, prefix) {
		model.Groups = append(model.Groups, newGroupViewModel(g))
	}
	if p != "" && len(model.Groups) == 0 {
		diags.Append(noGroupsWarning(p, "groups is empty"))
	}
	return model
}

// noGroupsWarning is not an error, but never silent: a misspelt prefix must
// not look like an empty coordinator.
func noGroupsWarning(p, outcome string) diag.Diagnostic {
	return diag.NewAttributeWarningDiagnostic(path.Root("stream_prefix"), fmt.Sprintf("No groups under stream prefix %q", p),
		fmt.Sprintf("The coordinator has no group under stream prefix %q, so %s. Prefixes are case-sensitive; "+
			"omit stream_prefix to list every group.", p, outcome))
}
