package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

var _ ephemeral.EphemeralResourceWithConfigure = &tokenEphemeralResource{}

// NewTokenEphemeralResource is the redisstreamcoordinator_token ephemeral resource.
func NewTokenEphemeralResource() ephemeral.EphemeralResource { return &tokenEphemeralResource{} }

type tokenEphemeralResource struct{ pd *providerData }

type tokenModel struct {
	Username         types.String `tfsdk:"username"`
	Password         types.String `tfsdk:"password"`
	Token            types.String `tfsdk:"token"`
	TokenType        types.String `tfsdk:"token_type"`
	ExpiresAt        types.String `tfsdk:"expires_at"`
	ExpiresInSeconds types.Int64  `tfsdk:"expires_in_seconds"`
	Roles            []string     `tfsdk:"roles"`
}

func (r *tokenEphemeralResource) Metadata(_ context.Context, req ephemeral.MetadataRequest, resp *ephemeral.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_token"
}

func (r *tokenEphemeralResource) Schema(_ context.Context, _ ephemeral.SchemaRequest, resp *ephemeral.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Exchanges a username and password for a coordinator Bearer token (`POST /coord/v1/auth/login`) " +
			"for one Terraform run, never written to the plan or the state: for a provider instance or an HTTP call that must not " +
			"see the password.",
		Attributes: map[string]schema.Attribute{
			"username": schema.StringAttribute{
				MarkdownDescription: "Principal to log in as. Omit it (with `password`) to exchange the provider's own credentials: " +
					"its username and password, or its Bearer token, which yields a fresh token with the same roles.",
				Optional: true,
				Validators: []validator.String{
					stringvalidator.LengthAtLeast(1),
					stringvalidator.AlsoRequires(path.MatchRoot("password")),
				},
			},
			"password": schema.StringAttribute{
				MarkdownDescription: "Password of `username`.",
				Optional:            true,
				Sensitive:           true,
				Validators:          []validator.String{stringvalidator.AlsoRequires(path.MatchRoot("username"))},
			},
			"token": schema.StringAttribute{
				MarkdownDescription: "The Bearer token, for an `Authorization: Bearer <token>` header or a provider's `token` argument.",
				Computed:            true,
				Sensitive:           true,
			},
			"token_type": schema.StringAttribute{
				MarkdownDescription: "Always `Bearer`.",
				Computed:            true,
			},
			"expires_at": schema.StringAttribute{
				MarkdownDescription: "When the token expires (RFC 3339, UTC).",
				Computed:            true,
			},
			"expires_in_seconds": schema.Int64Attribute{
				MarkdownDescription: "Lifetime of the token in seconds when it was issued (604800, 7 days, by default).",
				Computed:            true,
			},
			"roles": schema.ListAttribute{
				MarkdownDescription: "Roles fixed into the token, sorted: `READ`, `WRITE`, `ADMIN`, `MONITOR` or `MEMBER`.",
				Computed:            true,
				ElementType:         types.StringType,
			},
		},
	}
}

func (r *tokenEphemeralResource) Configure(_ context.Context, req ephemeral.ConfigureRequest, resp *ephemeral.ConfigureResponse) {
	r.pd = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *tokenEphemeralResource) Open(ctx context.Context, req ephemeral.OpenRequest, resp *ephemeral.OpenResponse) {
	var model tokenModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &model)...)
	if resp.Diagnostics.HasError() {
		return
	}
	api := r.pd.configuredAPI(&resp.Diagnostics, "the token was requested", "A token is requested now, but ")
	if api == nil {
		return
	}
	// A blank username makes the coordinator authenticate the login call
	// by its Authorization header, which carries the provider's credentials.
	username := model.Username.ValueString()
	login, err := api.Login(ctx, username, model.Password.ValueString())
	if err != nil {
		addLoginError(&resp.Diagnostics, username, err)
		return
	}
	if login.AccessToken == "" {
		resp.Diagnostics.AddError("Coordinator login returned no token",
			"POST /coord/v1/auth/login answered 200 without an accessToken. Check that the endpoint points at a Redis Stream Coordinator.")
		return
	}
	model.Token = types.StringValue(login.AccessToken)
	model.TokenType = types.StringValue(login.TokenType)
	model.ExpiresAt = timeValue(login.ExpiresAt)
	model.ExpiresInSeconds = types.Int64Value(login.ExpiresInSeconds)
	model.Roles = append([]string{}, login.Roles...)
	resp.Diagnostics.Append(resp.Result.Set(ctx, &model)...)
}

func addLoginError(diags *diag.Diagnostics, username string, err error) {
	who := "with the provider's credentials"
	next := ""
	if username != "" {
		who = fmt.Sprintf("as %q", username)
	}
	if client.IsUnauthorized(err) && username != "" {
		next = fmt.Sprintf("The coordinator rejected the username and password of ephemeral.redisstreamcoordinator_token (user %q).", username)
	}
	addAPIError(diags, "Coordinator login "+who+" failed", err, next)
}
