package provider

import (
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// providerData is what Configure hands every resource, data source and
// ephemeral resource.
type providerData struct {
	api *client.Client
	// groups serves this run's refresh reads (readGroup) and plan-time
	// listings (groupsForPlan) from shared answers (group_snapshot.go).
	// Apply-time decisions always read afresh through api.
	groups *groupReader
	// prefixLocks serialises work on one stream prefix within this provider
	// process: group creates that resolve their siblings' shard count, and
	// stream-level scales (which touch every group of the prefix).
	prefixLocks *keyedMutex
	// plans records what this run plans (plan_registry.go).
	plans planRegistry
}

func newProviderData(api *client.Client) *providerData {
	return &providerData{api: api, groups: newGroupReader(api), prefixLocks: &keyedMutex{}}
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
