package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// What every action shares: the provider's client, the audit attributes,
// the plan-time preview and the read-back of a mutation whose answer was
// lost. An action is a mutation like any other (X-Request-Id, requestedBy,
// reason, the client's retries); unlike a resource it has no state, so what
// it will do is shown by its plan-time preview (a warning, the only plan
// output an action has) and what it did by its progress messages.

// actionTimeout bounds one invocation: its reads, its mutations with their
// retries, and its wait. Actions have no timeouts block.
const actionTimeout = 5 * time.Minute

// actionBase holds the configured client of an action.
type actionBase struct{ pd *providerData }

func (b *actionBase) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	b.pd = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

// invokeAPI returns the client for an invocation, or reports why there is none.
func (b *actionBase) invokeAPI(diags *diag.Diagnostics) *client.Client {
	switch {
	case b.pd == nil:
		diags.AddError("Provider not configured",
			"The redisstreamcoordinator provider was not configured before this action was invoked. Check the provider block "+
				"(endpoint and credentials), or the REDIS_STREAM_COORDINATOR_* environment variables.")
		return nil
	case len(b.pd.configUnknown) > 0:
		// Terraform configures the provider with known values before it
		// invokes anything; this guards against a future change of that.
		diags.AddError("Provider configuration unknown", "The action cannot run: "+b.pd.unknownConfigDetail())
		return nil
	}
	return b.pd.api
}

// planAPI returns the client for a plan-time preview, or nil after adding a
// warning that says why the plan cannot show what the invocation will do.
func (b *actionBase) planAPI(diags *diag.Diagnostics, typeName string) *client.Client {
	switch {
	case b.pd == nil:
		return nil // validation before the provider is configured: nothing to preview yet
	case len(b.pd.configUnknown) > 0:
		diags.AddWarning(fmt.Sprintf("%s: cannot show what the invocation will do", typeName),
			"The plan cannot read the coordinator, so it cannot preview this action: "+b.pd.unknownConfigDetail()+
				"\n\nThe invocation reads the coordinator itself before it changes anything, and refuses what the coordinator would refuse.")
		return nil
	}
	return b.pd.api
}

// auditAttributes are the reason and requested_by of an action.
func auditAttributes(what string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"reason": schema.StringAttribute{
			MarkdownDescription: fmt.Sprintf("Why %s, recorded as `reason` in the coordinator's audit log. Required: the provider's "+
				"`default_reason` does not apply to actions.", what),
			Required:   true,
			Validators: []validator.String{notBlankValidator},
		},
		"requested_by": schema.StringAttribute{
			MarkdownDescription: "Recorded as `requestedBy` in the coordinator's audit log. Defaults to the provider's `requested_by`.",
			Optional:            true,
			Validators:          []validator.String{notBlankValidator},
		},
	}
}

// actionAudit is the audit part of an action's configuration.
type actionAudit struct {
	Reason      types.String `tfsdk:"reason"`
	RequestedBy types.String `tfsdk:"requested_by"`
}

// mutation is the audit identity of one logical operation: a fresh request
// id that every re-send of that operation keeps.
func (a actionAudit) mutation(api *client.Client, operation string) client.Mutation {
	return client.Mutation{RequestID: api.NewRequestID(operation), RequestedBy: a.RequestedBy.ValueString(), Reason: a.Reason.ValueString()}
}

// requestedBy is what the coordinator will record as requestedBy.
func (a actionAudit) requestedBy(api *client.Client) string {
	if v := a.RequestedBy.ValueString(); v != "" {
		return v
	}
	return api.RequestedBy()
}

// progressReporter sends an invocation's progress messages to Terraform
// (shown as the action runs) and to the log.
type progressReporter struct {
	ctx  context.Context
	resp *action.InvokeResponse
}

func (p progressReporter) say(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	tflog.Info(p.ctx, "action progress: "+msg)
	if p.resp.SendProgress != nil {
		p.resp.SendProgress(action.InvokeProgressEvent{Message: msg})
	}
}

// formatSince renders a migration timestamp for a preview or a message.
func formatSince(t client.Time) string {
	if t.IsZero() {
		return "an unknown time"
	}
	return t.UTC().Format(time.RFC3339)
}
