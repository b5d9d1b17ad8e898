package provider

import (
	"context"
	"fmt"
	"iter"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// With include_resource each result carries the resource exactly as an import
// followed by a refresh would record it, so generated configuration plans
// nothing but the imports.

var (
	_ provider.ProviderWithListResources = &coordinatorProvider{}
	_ list.ListResourceWithConfigure     = &groupListResource{}
)

func (p *coordinatorProvider) ListResources(context.Context) []func() list.ListResource {
	return []func() list.ListResource{NewGroupListResource, NewGroupShardCountListResource}
}

// groupListResource lists the groups as resources of type name, noun naming
// the results; perPrefix keeps the first group of each stream prefix.
type groupListResource struct {
	pd                      *providerData
	name, description, noun string
	perPrefix               bool
	fill                    func(ctx context.Context, res *tfsdk.Resource, grp *client.Group) diag.Diagnostics
}

func (r *groupListResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.pd = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *groupListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + r.name
}

func (r *groupListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: r.description,
		Attributes: map[string]listschema.Attribute{
			"stream_prefix": listschema.StringAttribute{
				MarkdownDescription: "Only list the groups under this stream prefix (exact, case-sensitive match). Omit it to list every group.",
				Optional:            true,
				Validators:          lookupNameValidators(kindStreamPrefix),
			},
		},
	}
}

func (r *groupListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	groups, prefix, done := r.queriedGroups(ctx, req)
	if done != nil {
		stream.Results = done
		return
	}
	if r.perPrefix {
		groups = firstGroupPerPrefix(groups)
	}
	stream.Results = streamResults(ctx, req, groups, prefix, r.noun, r.fill)
}

// A non-nil done from queriedGroups is the whole answer, to return as is; a
// null prefix lists every group.
func (r *groupListResource) queriedGroups(ctx context.Context, req list.ListRequest) (groups []*client.Group, prefix types.String, done iter.Seq[list.ListResult]) {
	var diags diag.Diagnostics
	if !req.Config.Raw.IsNull() {
		diags.Append(req.Config.GetAttribute(ctx, path.Root("stream_prefix"), &prefix)...)
	}
	if !diags.HasError() {
		r.pd.configuredAPI(&diags, "this list block was queried (its provider block is in the .tfquery.hcl file or the configuration)",
			"The list block cannot be queried: ")
	}
	if diags.HasError() {
		return nil, prefix, list.ListResultsStreamDiagnostics(diags)
	}
	if req.Limit <= 0 {
		return nil, prefix, list.NoListResults
	}
	all, err := r.pd.groupsForPlan(ctx) // a query mutates nothing: one listing serves the run
	if err != nil {
		summary := "Failed to list the coordinator's groups"
		if !prefix.IsNull() {
			summary = fmt.Sprintf("Failed to list the groups under stream prefix %q", prefix.ValueString())
		}
		addAPIError(&diags, summary, err, "The query lists every group with one GET /coord/v1/monitoring/groups (the READ role is enough). "+
			"Run terraform query again once the coordinator answers.")
		return nil, prefix, list.ListResultsStreamDiagnostics(diags)
	}
	groups = groupsUnder(all, prefix)
	tflog.Debug(ctx, "listed groups for a query", map[string]any{"listed": len(all), "matching": len(groups), "limit": req.Limit})
	return groups, prefix, nil
}

// streamResults puts limitWarning on the last result: a result of its own
// after the limit would never be read.
func streamResults(ctx context.Context, req list.ListRequest, groups []*client.Group, prefix types.String, noun string,
	fill func(ctx context.Context, res *tfsdk.Resource, grp *client.Group) diag.Diagnostics,
) iter.Seq[list.ListResult] {
	return func(push func(list.ListResult) bool) {
		if len(groups) == 0 && !prefix.IsNull() {
			push(list.ListResult{Diagnostics: diag.Diagnostics{noGroupsWarning(prefix.ValueString(), "the query found nothing")}})
			return
		}
		for n, grp := range groups {
			if int64(n) >= req.Limit {
				return
			}
			result := req.NewListResult(ctx)
			result.DisplayName = groupID(grp.StreamPrefix, grp.ConsumerGroup)
			result.Diagnostics.Append(setGroupIdentity(ctx, result.Identity, types.StringValue(grp.StreamPrefix), types.StringValue(grp.ConsumerGroup))...)
			if req.IncludeResource && !result.Diagnostics.HasError() {
				result.Diagnostics.Append(fill(ctx, result.Resource, grp)...)
			}
			if int64(n)+1 == req.Limit && len(groups) > n+1 {
				result.Diagnostics.Append(limitWarning(req.Limit, len(groups), noun, result.DisplayName, prefix))
			}
			if !push(result) {
				return
			}
		}
	}
}

func nullResourceModel(ctx context.Context, res *tfsdk.Resource, dst any) diag.Diagnostics {
	objType, ok := res.Schema.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		var diags diag.Diagnostics
		diags.AddError("Provider error: unexpected resource schema", "The resource schema's type is not an object. This is a bug in the provider; please report it.")
		return diags
	}
	vals := make(map[string]tftypes.Value, len(objType.AttributeTypes))
	for name, t := range objType.AttributeTypes {
		vals[name] = tftypes.NewValue(t, nil)
	}
	raw := tftypes.NewValue(objType, vals)
	return readModel(ctx, res.Schema, raw, dst, (&tfsdk.Resource{Schema: res.Schema, Raw: raw}).Get)
}

// NewGroupListResource is the redisstreamcoordinator_group list resource.
func NewGroupListResource() list.ListResource {
	return &groupListResource{name: "group", noun: "groups", fill: fillImportedGroup,
		description: "Every consumer group on the coordinator, or those of one stream prefix, as " +
			"`redisstreamcoordinator_group` resources to import with `terraform query` (Terraform 1.14 or later)."}
}

func fillImportedGroup(ctx context.Context, res *tfsdk.Resource, grp *client.Group) diag.Diagnostics {
	var m groupResourceModel
	diags := nullResourceModel(ctx, res, &m)
	if diags.HasError() {
		return diags
	}
	m.StreamPrefix, m.ConsumerGroup = types.StringValue(grp.StreamPrefix), types.StringValue(grp.ConsumerGroup)
	m.DeletionPolicy, m.ForceDelete = types.StringValue(deletionPolicyAbandon), types.BoolValue(false)
	m.fill(grp)
	m.Recreation = recreationNull()
	diags.Append(writeModel(ctx, res.Schema, &res.Raw, &m, res.Set)...)
	return diags
}
