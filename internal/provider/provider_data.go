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

type providerData struct {
	api    *client.Client
	groups *groupReader
	// prefixLocks serialises sibling-count resolution and prefix-wide scales.
	prefixLocks *keyedMutex
	watch       *prefix.Watcher
	plans       planRegistry
	// configUnknown is set only during a plan whose provider block depends on
	// resources not yet created; api is nil then.
	configUnknown []string
	// configuration is random per instance, so a later instance does not take what
	// this one wrote into a private state for its own.
	configuration string
	timing        settleTiming
}

func newConfiguration() string { return rand.Text() }

func newUnknownProviderData(unknown []string) *providerData {
	return &providerData{prefixLocks: &keyedMutex{}, configUnknown: unknown, configuration: newConfiguration()}
}

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

// providerDataFrom returns nil without error before the provider is configured.
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
