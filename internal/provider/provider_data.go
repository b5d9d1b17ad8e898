package provider

import (
	"crypto/rand"
	"fmt"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// providerData is what Configure hands every resource, data source and
// ephemeral resource.
type providerData struct {
	api *client.Client
	// groups serves this run's refresh reads (readGroup) and plan-time
	// listings (groupsForPlan) from shared answers (group_snapshot.go).
	groups *groupReader
	// prefixLocks serialises work on one stream prefix within this provider
	// process: group creates that resolve their siblings' shard count, and
	// stream-level scales (which touch every group of the prefix).
	prefixLocks *keyedMutex
	// watch serves every shard count wait of the run from one poll of the
	// groups listing (prefix.Watcher), and an executor's first reading of
	// its prefix from the poll's next round.
	watch *prefix.Watcher
	// plans records what this run plans (plan_registry.go).
	plans planRegistry
	// run journals what this run's executor carried out on each stream
	// prefix (prefix.Run).
	run prefix.Run
	// configUnknown lists the provider settings that are unknown at plan
	// time; api is nil then. Set only during a plan whose provider block
	// depends on resources not yet created.
	configUnknown []string
	// configuration is random, one per configured provider instance: what
	// this instance wrote into a private state, a later instance (the next
	// command, or the apply after a plan) does not take for its own
	// (group_shard_count_import.go).
	configuration string
	// timing is how long sent mutations are settled for (grace.go).
	timing settleTiming
}

func newConfiguration() string { return rand.Text() }

func newUnknownProviderData(unknown []string) *providerData {
	return &providerData{prefixLocks: &keyedMutex{}, configUnknown: unknown, configuration: newConfiguration()}
}

// unknownConfigDetail explains why a plan-time check could not run.
func (pd *providerData) unknownConfigDetail() string {
	return fmt.Sprintf("The provider configuration (%s) depends on values known only after apply, so the provider cannot reach "+
		"the coordinator at plan time. The checks and previews that need the coordinator are deferred to apply, where they fail "+
		"before any change if they do not pass. To see them in the plan, configure the provider from literals, variables or "+
		"REDIS_STREAM_COORDINATOR_* environment variables, or apply the resources it depends on first (-target).",
		strings.Join(pd.configUnknown, ", "))
}

func newProviderData(api *client.Client, timing settleTiming) *providerData {
	return &providerData{api: api, groups: newGroupReader(api), prefixLocks: &keyedMutex{},
		watch: prefix.NewWatcher(roundReader{api}, prefix.Options{}), configuration: newConfiguration(), timing: timing}
}

// providerDataFrom type-asserts ProviderData; nil data (the provider is not
// configured yet, e.g. during validation) returns nil without an error.
func providerDataFrom(data any, diags *diag.Diagnostics) *providerData {
	if data == nil {
		return nil
	}
	pd, ok := data.(*providerData)
	if !ok {
		diags.AddError("Unexpected provider data",
			fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider; please report it.", data))
		return nil
	}
	return pd
}

type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// Lock locks key and returns its unlock function.
func (k *keyedMutex) Lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*sync.Mutex{}
	}
	l, ok := k.locks[key]
	if !ok {
		l = &sync.Mutex{}
		k.locks[key] = l
	}
	k.mu.Unlock()
	l.Lock()
	return l.Unlock
}
