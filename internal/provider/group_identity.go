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

// Resource identity of redisstreamcoordinator_group and
// redisstreamcoordinator_group_shard_count: the group's
// {stream_prefix, consumer_group}, the same pair as the string id.
//
// Terraform and OpenTofu store an identity beside the state from 1.12 on and
// import by it (`import { identity = {...} }`); `terraform query` (Terraform
// 1.14) returns it for every listed group. Older Terraform, and a state written before this
// provider had identities, send a null prior identity: the framework then
// fails the Read, Update or Create with "Missing Resource Identity After …"
// unless the provider sets one. So every Create, Read (whatever its outcome,
// including a group that vanished) and Update sets it from the state's own
// names, before anything else can return: the identity never depends on an
// answer from the coordinator, and it cannot change (changing either name
// replaces the resource).

// groupIdentityModel is the identity of both resources.
type groupIdentityModel struct {
	StreamPrefix  types.String `tfsdk:"stream_prefix"`
	ConsumerGroup types.String `tfsdk:"consumer_group"`
}

// groupIdentitySchema is the identity schema of both resources.
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

// setGroupIdentity records {p, g} as the resource's identity. A nil identity
// (a response the framework prepared without one) and names not known yet
// are left alone: there is nothing to record.
func setGroupIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, p, g types.String) diag.Diagnostics {
	if identity == nil || p.IsNull() || p.IsUnknown() || g.IsNull() || g.IsUnknown() {
		return nil
	}
	return identity.Set(ctx, &groupIdentityModel{StreamPrefix: p, ConsumerGroup: g})
}

// importGroup is the ImportState of both resources: by the string id
// `{stream_prefix}/{consumer_group}` (terraform import, import blocks with
// id, every Terraform and OpenTofu version) or by identity (import blocks
// with identity, Terraform 1.12+, and the configuration `terraform query
// -generate-config-out` writes). defaults are the attributes Read cannot
// infer, as importGroupID takes them.
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
	resp.Diagnostics.Append(markImported(ctx, resp.Private)...) // group_import.go: an import never creates
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
