// Package provider implements the Terraform provider for Redis Stream
// Coordinator on terraform-plugin-framework.
package provider

import (
	"context"
	"fmt"
	"net/http"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// RegistryAddress is the provider's source address.
const RegistryAddress = "registry.terraform.io/ghkdqhrbals/redisstreamcoordinator"

// TypeName prefixes every resource, data source and ephemeral resource.
const TypeName = "redisstreamcoordinator"

var (
	_ provider.Provider                       = &coordinatorProvider{}
	_ provider.ProviderWithFunctions          = &coordinatorProvider{}
	_ provider.ProviderWithEphemeralResources = &coordinatorProvider{}
	_ provider.ProviderWithActions            = &coordinatorProvider{}
)

type coordinatorProvider struct {
	version       string
	getenv        func(string) string
	httpTransport http.RoundTripper
	timing        settleTiming
}

// New returns a provider factory for providerserver.
func New(version string) func() provider.Provider {
	return func() provider.Provider {
		return &coordinatorProvider{version: version}
	}
}

type providerModel struct {
	Endpoint           types.String `tfsdk:"endpoint"`
	Username           types.String `tfsdk:"username"`
	Password           types.String `tfsdk:"password"`
	Token              types.String `tfsdk:"token"`
	Login              types.Bool   `tfsdk:"login"`
	RequestedBy        types.String `tfsdk:"requested_by"`
	RequestIDPrefix    types.String `tfsdk:"request_id_prefix"`
	RunID              types.String `tfsdk:"run_id"`
	DefaultReason      types.String `tfsdk:"default_reason"`
	MaxRetries         types.Int64  `tfsdk:"max_retries"`
	RetryWaitMin       types.String `tfsdk:"retry_wait_min"`
	RetryWaitMax       types.String `tfsdk:"retry_wait_max"`
	RequestTimeout     types.String `tfsdk:"request_timeout"`
	ReadTimeout        types.String `tfsdk:"read_timeout"`
	CACertPEM          types.String `tfsdk:"ca_cert_pem"`
	InsecureSkipVerify types.Bool   `tfsdk:"insecure_skip_verify"`
}

func (p *coordinatorProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = TypeName
	resp.Version = p.version
}

func envNote(name string) string {
	return fmt.Sprintf(" Environment variable: `%s`.", envName(name))
}

// Every provider setting is optional, with an environment fallback its description names.
func (p *coordinatorProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	attrs := map[string]schema.Attribute{}
	str := func(name, desc string, sensitive bool, v ...validator.String) {
		attrs[name] = schema.StringAttribute{MarkdownDescription: desc + envNote(name), Optional: true, Sensitive: sensitive, Validators: v}
	}
	boolean := func(name, desc string) {
		attrs[name] = schema.BoolAttribute{MarkdownDescription: desc + envNote(name), Optional: true}
	}
	duration := durationValidator{}
	str("endpoint", "Base URL of the coordinator, for example `https://coordinator.internal:8080` (`/coord/v1` is appended), without credentials. Required, here or in the environment.",
		false, endpointValidator{})
	str("username", "Username of the coordinator principal, for Basic authentication or `login`. Needs `password` ([where credentials come from](#where-credentials-come-from)).", false)
	str("password", "Password of `username`. Cannot be combined with `token`.", true)
	str("token", "A pre-issued Bearer token. Set here, it is the only credential used ([where credentials come from](#where-credentials-come-from)).", true)
	boolean("login", "Exchange `username`/`password` for a Bearer token once per run instead of sending the password with every request. Not with `token`. Defaults to `false`.")
	str("requested_by", "Sent as `requestedBy` with every mutation and recorded in the coordinator's audit log. "+
		"Defaults to `terraform`; `terraform:<workspace>` is the governance convention.", false, notBlankValidator)
	str("request_id_prefix", "Prefix of every `X-Request-Id` (`<prefix>-<run id>-<operation>-<suffix>`, the same across retries). Defaults to `terraform`.",
		false, requestIDPartValidator)
	str("run_id", "This run's id in request ids and the default reason. Defaults to the CI system's run id (`TFC_RUN_ID`, `GITHUB_RUN_ID`, `CI_PIPELINE_ID` and others), else a random id.",
		false, requestIDPartValidator)
	str("default_reason", "Sent as `reason` with every mutation whose resource sets none. Defaults to `terraform apply <run id>`. "+
		"The coordinator rejects a blank reason on delete, scale and rollback.", false, notBlankValidator)
	attrs["max_retries"] = schema.Int64Attribute{
		MarkdownDescription: "How many times a request is retried on `429`, transient `409`/`503` and safe network errors. Defaults to `10`; `0` disables retries." + envNote("max_retries"),
		Optional:            true,
		Validators:          []validator.Int64{int64validator.AtLeast(0)},
	}
	str("retry_wait_min", "Shortest wait between retries when the coordinator sends no `Retry-After`, as a Go duration (`500ms`, `2s`). "+
		"Defaults to `1s`.", false, duration)
	str("retry_wait_max", "Longest wait between retries, as a Go duration. Defaults to `30s`. A `Retry-After` longer than both this and 60 s fails at once.", false, duration)
	str("request_timeout", "Timeout of a single HTTP attempt, as a Go duration. Defaults to `30s`.", false, duration)
	str("read_timeout", "Bound on each request outside a resource's `timeouts` (refreshes, data sources, plan-time reads), retries included, as a Go duration. Defaults to `5m`.", false, duration)
	str("ca_cert_pem", "PEM-encoded CA certificate(s) trusted in addition to the system roots, for a coordinator behind a private CA. "+
		"Conflicts with `insecure_skip_verify`.", false, stringvalidator.ConflictsWith(path.MatchRoot("insecure_skip_verify")))
	boolean("insecure_skip_verify", "Skip TLS certificate verification: only for tests. Defaults to `false`.")
	resp.Schema = schema.Schema{
		MarkdownDescription: "Manages consumer groups and their shard counts on a " +
			"[Redis Stream Coordinator](https://github.com/ghkdqhrbals/redis-stream-coordinator) through its admin API " +
			"(`/coord/v1`). Mutations need a principal with the `WRITE` role; reads (plans, data sources) need `READ`. " +
			"Every mutation carries an `X-Request-Id` plus `requestedBy` and `reason`, so the coordinator's audit log ties it to the Terraform run.",
		Attributes: attrs,
	}
}

func (p *coordinatorProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var model providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &model)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if unknown := unknownSettings(model); len(unknown) > 0 {
		tflog.Info(ctx, "provider configuration unknown at plan time; plan-time checks are deferred to apply", map[string]any{"unknown": unknown})
		setProviderData(resp, newUnknownProviderData(unknown))
		return
	}
	cfg, diags := resolveConfig(model, p.getenv)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	cfg.HTTPTransport = p.httpTransport
	cfg.UserAgent = fmt.Sprintf("terraform-provider-redisstreamcoordinator/%s (+https://www.terraform.io) Terraform/%s", p.version, req.TerraformVersion)
	c, err := client.New(cfg)
	if err != nil {
		resp.Diagnostics.AddError("Invalid coordinator client configuration", err.Error()+
			"\n\nCheck the provider block and the REDIS_STREAM_COORDINATOR_* environment variables.")
		return
	}
	fields := credentialsLog(model, p.getenv)
	fields["endpoint"], fields["auth"], fields["run_id"], fields["requested_by"] = c.Endpoint(), authMode(cfg), c.RunID(), c.RequestedBy()
	tflog.Debug(ctx, "configured Redis Stream Coordinator client", fields)
	setProviderData(resp, newProviderData(c, p.timing))
}

func setProviderData(resp *provider.ConfigureResponse, pd *providerData) {
	resp.DataSourceData, resp.ResourceData, resp.EphemeralResourceData, resp.ListResourceData, resp.ActionData = pd, pd, pd, pd, pd
}

func authMode(cfg client.Config) string {
	switch {
	case cfg.Token != "":
		return "bearer"
	case cfg.Login:
		return "login"
	case cfg.Username != "":
		return "basic"
	}
	return "none"
}

func (p *coordinatorProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{NewGroupResource, NewGroupShardCountResource}
}

func (p *coordinatorProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		NewGroupDataSource, NewGroupsDataSource, NewProducerRoutingDataSource, NewAssignmentsDataSource,
		NewMigrationsDataSource, NewMembersDataSource, NewHealthDataSource, NewCompatibilityDataSource,
	}
}

func (p *coordinatorProvider) Functions(context.Context) []func() function.Function {
	return []func() function.Function{NewShardForKeyFunction, NewStreamKeyFunction, NewRedisSlotFunction}
}

func (p *coordinatorProvider) EphemeralResources(context.Context) []func() ephemeral.EphemeralResource {
	return []func() ephemeral.EphemeralResource{NewTokenEphemeralResource}
}

func (p *coordinatorProvider) Actions(context.Context) []func() action.Action {
	return []func() action.Action{NewRollbackMigrationAction, NewDeleteGroupAction}
}
