// Package noop is the benchmark's floor: a terraform-plugin-framework
// provider whose resources mirror the shape of redisstreamcoordinator_group
// and redisstreamcoordinator_group_shard_count but whose CRUD does nothing.
// Planning N of its resources costs what every external provider pays for
// the plugin protocol, so the real provider's plan time is compared with it.
// (terraform_data is no fair floor: it is built in and skips the protocol.)
package noop

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	pschema "github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Address is the source address the benchmark's dev_overrides point at.
const Address = "registry.terraform.io/bench/noop"

// New is the provider factory for providerserver.
func New() provider.Provider { return noopProvider{} }

type noopProvider struct{}

func (noopProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "noop"
}

// Schema has the real provider's connection settings, so configuring it
// decodes the same kind of block.
func (noopProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = pschema.Schema{Attributes: map[string]pschema.Attribute{
		"endpoint": pschema.StringAttribute{Optional: true},
		"username": pschema.StringAttribute{Optional: true},
		"password": pschema.StringAttribute{Optional: true, Sensitive: true},
	}}
}

func (noopProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (noopProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		// The same-shape floor: the provider's two resources, their schemas
		// derived from the provider's own (RealShape).
		func() resource.Resource { return &noopResource{name: "_group"} },
		func() resource.Resource { return &noopResource{name: "_group_shard_count"} },
		// The one-attribute floor: the least any framework resource costs.
		func() resource.Resource { return &noopResource{name: "_one", schema: &oneAttribute} },
	}
}

func (noopProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

// oneAttribute is noop_one's whole schema (no id, no timeouts block).
var oneAttribute = schema.Schema{Attributes: map[string]schema.Attribute{
	"name": schema.StringAttribute{Required: true},
}}

// noopResource stores its plan as its state and never changes it again.
type noopResource struct {
	name string
	// schema is the one-attribute schema; when nil, the resource has the
	// shape of the provider's resource of the same suffix (RealShape).
	schema *schema.Schema
}

func (r *noopResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + r.name
}

func (r *noopResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	if r.schema != nil {
		resp.Schema = *r.schema
		return
	}
	s, err := RealShape(ctx, r.name)
	if err != nil {
		resp.Diagnostics.AddError("noop provider", err.Error())
		return
	}
	resp.Schema = s
}

// Create stores the plan, with every value still unknown resolved (the id
// to a constant, the rest to null): Terraform rejects unknowns after apply.
func (r *noopResource) Create(_ context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = resolveUnknowns(req.Plan.Raw, &resp.Diagnostics)
}

func (r *noopResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

func (r *noopResource) Update(_ context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = resolveUnknowns(req.Plan.Raw, &resp.Diagnostics)
}

func (r *noopResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}

var idPath = tftypes.NewAttributePath().WithAttributeName("id")

func resolveUnknowns(plan tftypes.Value, diags *diag.Diagnostics) tftypes.Value {
	out, err := tftypes.Transform(plan, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		switch {
		case v.IsKnown():
			return v, nil
		case p.Equal(idPath):
			return tftypes.NewValue(tftypes.String, "noop"), nil
		}
		return tftypes.NewValue(v.Type(), nil), nil
	})
	if err != nil {
		diags.AddError("noop provider", err.Error())
	}
	return out
}
