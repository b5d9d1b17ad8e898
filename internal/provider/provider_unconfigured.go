package provider

import (
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// An unconfigured provider has no client: its configuration is unknown at
// plan time (an endpoint from a resource not created yet, e.g. a coordinator
// deployed by the same configuration), or it was never configured. Every
// component gets the same rule from here:
//
//   - a resource's Read keeps the state as it is and says so
//     (skipRefreshUnconfigured); an import, which has nothing to keep, fails;
//   - a plan skips what needs the coordinator and says so (configUnknownAtPlan);
//   - data sources, ephemeral resources, list resources and actions report
//     that they cannot run (dataSourceBase.api, actionBase, listBase);
//   - the provider data's reads return errProviderUnconfigured instead of
//     dereferencing a client that does not exist, so a path that misses the
//     rule fails with a diagnostic, never with a crash.

// errProviderUnconfigured is what the provider data's reads return without a client.
var errProviderUnconfigured = errors.New("the provider has no coordinator client: its configuration is unknown until apply or was never configured")

// unconfigured reports whether pd has no coordinator to ask.
func (pd *providerData) unconfigured() bool {
	return pd == nil || pd.api == nil || pd.groups == nil || len(pd.configUnknown) > 0
}

// unconfiguredDetail says why there is no coordinator to ask, and what to do.
func (pd *providerData) unconfiguredDetail() string {
	if pd != nil && len(pd.configUnknown) > 0 {
		return pd.unknownConfigDetail()
	}
	return "The provider was not configured before this call. Check the provider block (endpoint and credentials), or the " +
		"REDIS_STREAM_COORDINATOR_* environment variables."
}

// skipRefreshUnconfigured is the rule for a resource's Read without a
// client: a refresh keeps the state as it is, with a warning (summary, about
// what, e.g. "group orders/svc"), and the plan is made from it; an import
// fails, since there is no state to keep and nothing may be imported
// unread. It returns true when Read must return now.
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

// planUnderWayUnconfigured is the shard count's plan, keeping its count,
// when the provider is unconfigured and the last refresh saw a migration
// under way to that count: a configured plan would be an update that waits
// for it (planWait), and Terraform plans again with the configured
// provider during apply, so what that plan may set is left unknown here,
// where the coordinator cannot be read to decide. It reports whether it did.
func planUnderWayUnconfigured(pd *providerData, plan *groupShardCountModel, seen *client.Group, diags *diag.Diagnostics) bool {
	am := underWayMigration(seen)
	if !pd.unconfigured() || am == nil || int64(am.ToShardCount) != plan.ShardCount.ValueInt64() || plan.WaitFor.ValueString() != waitForCompletion {
		return false
	}
	plan.Resharding = types.ObjectUnknown(reshardingAttrTypes)
	plan.MigrationIDs = types.MapUnknown(types.StringType)
	plan.MigrationState = types.StringUnknown()
	plan.MetadataVersion = types.Int64Unknown()
	diags.AddWarning(fmt.Sprintf("A resharding of stream prefix %q may still be under way", seen.StreamPrefix), fmt.Sprintf(
		"When it was last refreshed, group %q under stream prefix %q had migration %s (%d→%d shards) under way, %s. The plan "+
			"cannot read the coordinator to see whether it still is: %s\n\nThe apply reads it first: if the migration is still "+
			"under way, it waits for it to complete, without sending another scale.",
		seen.ConsumerGroup, seen.StreamPrefix, am.ReshardingID, am.FromShardCount, am.ToShardCount, am.State, pd.unconfiguredDetail()))
	return true
}
