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

// An action has no state: the plan shows what it will do only as a preview
// warning, and what it did appears in its progress messages.

// actionTimeout bounds one invocation (actions have no timeouts block).
const actionTimeout = 5 * time.Minute

type actionBase struct{ pd *providerData }

func (b *actionBase) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	b.pd = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

func (b *actionBase) invokeAPI(diags *diag.Diagnostics) *client.Client {
	// Terraform configures the provider before invoking; guard against that changing.
	return b.pd.configuredAPI(diags, "this action was invoked", "The action cannot run: ")
}

// planAPI returns nil after a warning when the plan cannot preview the
// invocation: one of the fields it reads (named by fields) is unknown, or the
// provider's configuration is.
func (b *actionBase) planAPI(diags *diag.Diagnostics, typeName string, unknown bool, fields string) *client.Client {
	var why string
	switch {
	case unknown:
		why = fields + " is known only after apply."
	case b.pd == nil:
		return nil // validation before the provider is configured: nothing to preview yet
	case len(b.pd.configUnknown) > 0:
		why = b.pd.unknownConfigDetail()
	default:
		return b.pd.api
	}
	diags.AddWarning(fmt.Sprintf("%s: cannot show what the invocation will do", typeName), "The plan cannot tell what to read on "+
		"the coordinator, so it cannot preview this action: "+why+"\n\nThe invocation reads the coordinator itself before it changes anything, and "+
		"refuses what the coordinator would refuse.")
	return nil
}

// planReadFailed fails the plan, as the resources' plans fail, when it cannot read what it previews.
func planReadFailed(diags *diag.Diagnostics, typeName string, err error) {
	addAPIError(diags, typeName+": the plan cannot show what the invocation will do", err,
		"The plan reads the coordinator (a READ principal is enough) to show what the invocation will do, and fails when it "+
			"cannot, as the resources' plans do. Fix the cause above and plan again. Nothing was sent.")
}

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

type actionAudit struct {
	Reason      types.String `tfsdk:"reason"`
	RequestedBy types.String `tfsdk:"requested_by"`
}

// mutation keeps one request id across every re-send of the operation.
func (a actionAudit) mutation(api *client.Client, operation string) client.Mutation {
	return client.Mutation{RequestID: api.NewRequestID(operation), RequestedBy: a.RequestedBy.ValueString(), Reason: a.Reason.ValueString()}
}

func (a actionAudit) requestedBy(api *client.Client) string {
	if v := a.RequestedBy.ValueString(); v != "" {
		return v
	}
	return api.RequestedBy()
}

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

func formatSince(t client.Time) string {
	if t.IsZero() {
		return "an unknown time"
	}
	return t.UTC().Format(time.RFC3339)
}
