package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Older Terraform, and states from before identities, send a null prior
// identity, and the framework fails the RPC unless the provider sets one; so
// every Create, Read and Update sets it from the state's names first.

type groupIdentityModel struct {
	StreamPrefix  types.String `tfsdk:"stream_prefix"`
	ConsumerGroup types.String `tfsdk:"consumer_group"`
}

func groupIdentitySchema() identityschema.Schema {
	return identityschema.Schema{
		Attributes: map[string]identityschema.Attribute{
			"stream_prefix": identityschema.StringAttribute{
				Description:       "Stream prefix of the group.",
				RequiredForImport: true,
			},
			"consumer_group": identityschema.StringAttribute{
				Description:       "Consumer group name.",
				RequiredForImport: true,
			},
		},
	}
}

func setGroupIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, p, g types.String) diag.Diagnostics {
	if identity == nil || p.IsNull() || p.IsUnknown() || g.IsNull() || g.IsUnknown() {
		return nil
	}
	return identity.Set(ctx, &groupIdentityModel{StreamPrefix: p, ConsumerGroup: g})
}

// importGroup imports by the string id `{stream_prefix}/{consumer_group}` or by
// identity.
func importGroup(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse, defaults map[string]any) {
	id := req.ID
	if id == "" && req.Identity != nil && !req.Identity.Raw.IsNull() {
		var ident groupIdentityModel
		resp.Diagnostics.Append(req.Identity.Get(ctx, &ident)...)
		if resp.Diagnostics.HasError() {
			return
		}
		p, g := ident.StreamPrefix.ValueString(), ident.ConsumerGroup.ValueString()
		for _, n := range []struct{ attr, kind, v string }{{"stream_prefix", kindStreamPrefix, p}, {"consumer_group", kindConsumerGroup, g}} {
			if msg := checkName(n.kind, n.v); msg != "" {
				resp.Diagnostics.AddError("Invalid import identity", fmt.Sprintf(
					"identity.%s: %s The identity names an existing group: { stream_prefix = \"orders\", consumer_group = \"order-service\" }.", n.attr, msg))
			}
		}
		if resp.Diagnostics.HasError() {
			return
		}
		id = groupID(p, g)
	}
	importGroupID(ctx, id, resp, defaults)
	if resp.Diagnostics.HasError() {
		return
	}
	p, g, _ := parseGroupID(id)
	resp.Diagnostics.Append(setGroupIdentity(ctx, resp.Identity, types.StringValue(p), types.StringValue(g))...)
	// An import never creates (group_import.go).
	resp.Diagnostics.Append(updatePrivateRecord(ctx, resp.Private, func(r *privateRecord) { r.ImportedNotRead = true })...)
}

var (
	_ resource.ResourceWithIdentity = &groupResource{}
	_ resource.ResourceWithIdentity = &groupShardCountResource{}
)

func (r *groupResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = groupIdentitySchema()
}

func (r *groupShardCountResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = groupIdentitySchema()
}
