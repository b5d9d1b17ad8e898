package provider

import (
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// An unconfigured provider (configuration unknown at plan time) has no client:
// Reads keep state, plans skip checks, everything else reports it cannot run.

var errProviderUnconfigured = errors.New("the provider has no coordinator client: its configuration is unknown until apply or was never configured")

func (pd *providerData) unconfigured() bool {
	return pd == nil || pd.api == nil || pd.groups == nil || len(pd.configUnknown) > 0
}

// configuredAPI returns the client, or nil after an error: attempt is what was
// attempted ("this data source was read"), blocked leads the detail of an
// unknown configuration.
func (pd *providerData) configuredAPI(diags *diag.Diagnostics, attempt, blocked string) *client.Client {
	switch {
	case pd == nil:
		diags.AddError("Provider not configured", "The redisstreamcoordinator provider was not configured before "+attempt+". Check the "+
			"provider block (endpoint and credentials), or the REDIS_STREAM_COORDINATOR_* environment variables.")
	case len(pd.configUnknown) > 0:
		diags.AddError("Provider configuration unknown", blocked+pd.unknownConfigDetail())
	default:
		return pd.api
	}
	return nil
}

func (pd *providerData) unconfiguredDetail() string {
	if pd != nil && len(pd.configUnknown) > 0 {
		return pd.unknownConfigDetail()
	}
	return "The provider was not configured before this call. Check the provider block (endpoint and credentials), or the " +
		"REDIS_STREAM_COORDINATOR_* environment variables."
}

// skipRefreshUnconfigured returns true when Read must return now. An import
// fails: nothing may be imported unread.
func skipRefreshUnconfigured(pd *providerData, diags *diag.Diagnostics, importing bool, summary, what string) bool {
	if !pd.unconfigured() {
		return false
	}
	if importing {
		diags.AddError("Cannot import "+what+" yet", "The import reads "+what+" from the coordinator, and there is none to ask: "+
			pd.unconfiguredDetail()+"\n\nNothing was imported. Import once the provider configuration is known (apply the resources it "+
			"depends on first, with -target).")
		return true
	}
	diags.AddWarning(summary, what+" was not refreshed, so the plan is made from the state as it was: "+pd.unconfiguredDetail())
	return true
}
