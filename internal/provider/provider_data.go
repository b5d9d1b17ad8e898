package provider

import (
	"context"
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

// planRegistry is what one run does to each group and prefix. Terraform re-plans during
// apply, after some of the run's creates and deletes, and that plan must give
// the first one's values: it reads here what the run itself did.
type planRegistry struct {
	mu       sync.Mutex
	groups   map[groupKey]*runGroup
	prefixes map[string]*runPrefix
}

// runPrefix is what the run does to a stream prefix as a whole.
type runPrefix struct {
	shardCounts map[string]bool // consumer groups with a shard-count plan
	scales      prefix.Scales   // the run's executor's steps on the prefix
}

// ofPrefix is p's record; callers hold r.mu.
func (r *planRegistry) ofPrefix(p string) *runPrefix {
	if r.prefixes == nil {
		r.prefixes = map[string]*runPrefix{}
	}
	if r.prefixes[p] == nil {
		r.prefixes[p] = &runPrefix{shardCounts: map[string]bool{}}
	}
	return r.prefixes[p]
}

// noteScale journals a step of the run's executor on prefix p.
func (r *planRegistry) noteScale(p string, target int32, planned map[string]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rp := r.ofPrefix(p)
	rp.scales = append(rp.scales, prefix.Scale{Target: target, Planned: planned})
}

// strikeScale removes the last step journaled for p, proved not to have
// reached the coordinator.
func (r *planRegistry) strikeScale(p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rp := r.ofPrefix(p); len(rp.scales) > 0 {
		rp.scales = rp.scales[:len(rp.scales)-1]
	}
}

// explains reports that a step of this run took group n of prefix p from was to now.
func (r *planRegistry) explains(p, n string, was, now int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ofPrefix(p).scales.Explains(n, was, now)
}

type runGroup struct {
	create *plannedGroupCreate
	// deletesOnReplace: deletion_policy DELETE, so a replacement deletes before it creates.
	deletesOnReplace bool
	// renamedAway: renamed with deletion_policy DELETE, so Terraform deletes it first.
	renamedAway bool
	// creating: this provider's create of the group is in flight, so a
	// listing that has it shows the run's own change.
	creating bool
	// created is the count this provider created the group with in this run.
	created *int32
	// deleted is the group as the run's plan saw it, once this provider deleted it.
	deleted *client.Group
	// vanished: Terraform re-plans a -/+ create during apply, after the no-op
	// delete, with no private state; that plan must keep the saved recreation.
	vanished *groupVanished
}

type groupKey struct{ prefix, group string }

func (r *planRegistry) note(p, g string, f func(*runGroup)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groups == nil {
		r.groups = map[groupKey]*runGroup{}
	}
	k := groupKey{p, g}
	if r.groups[k] == nil {
		r.groups[k] = &runGroup{}
	}
	f(r.groups[k])
}

// of sees what was planned or applied so far: a resource referencing a group comes after it.
func (r *planRegistry) of(p, g string) runGroup {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rg := r.groups[groupKey{p, g}]; rg != nil {
		return *rg
	}
	return runGroup{}
}

// planBasisOfPrefix is prefix p's groups as when this run was planned, from a
// listing taken now; it also reports whether this run deleted g.
func planBasisOfPrefix(r *planRegistry, groups []client.Group, p, g string) (map[string]client.Group, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]client.Group{}
	for _, grp := range groups {
		rg := r.groups[groupKey{p, grp.ConsumerGroup}]
		if grp.StreamPrefix == p && (rg == nil || rg.created == nil && (!rg.creating || grp.ConsumerGroup == g)) {
			out[grp.ConsumerGroup] = r.ofPrefix(p).scales.AsPlanned(grp)
		}
	}
	for k, rg := range r.groups {
		if k.prefix == p && rg.deleted != nil {
			out[k.group] = *rg.deleted
		}
	}
	rg := r.groups[groupKey{p, g}]
	return out, rg != nil && rg.deleted != nil
}

// plannedGroupCreate's InitialShardCount is nil when unknown at plan time.
type plannedGroupCreate struct {
	InitialShardCount *int64
	// Unset: no initial_shard_count; the create takes the siblings' count or the default.
	Unset bool
}

func (r *planRegistry) registerGroupCreate(p, g string, initial *int64) {
	r.note(p, g, func(rg *runGroup) {
		c := plannedGroupCreate{}
		if rg.create != nil {
			c = *rg.create
		}
		c.InitialShardCount = initial
		rg.create = &c
	})
}

// registerGroupCreateOfPrefix returns the prefix's other planned creates in
// the same step: of two planned at once, the later sees the earlier.
func (r *planRegistry) registerGroupCreateOfPrefix(p, g string, c plannedGroupCreate) map[string]plannedGroupCreate {
	out := map[string]plannedGroupCreate{}
	r.note(p, g, func(rg *runGroup) {
		rg.create = &c
		for k, o := range r.groups {
			if k.prefix == p && k.group != g && o.create != nil {
				out[k.group] = *o.create
			}
		}
	})
	return out
}

// registerShardCount returns the prefix's groups with a shard-count plan, sorted.
func (r *planRegistry) registerShardCount(p, g string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	rp := r.ofPrefix(p)
	rp.shardCounts[g] = true
	return sortedKeys(rp.shardCounts)
}

// deletedAsPlanned is the group as this run's plan saw it: a refresh does not
// raise the shard_count attribute, so the count is the private record's.
func deletedAsPlanned(ctx context.Context, private privateGetter, p, g string, state groupResourceModel) client.Group {
	grp := client.Group{StreamPrefix: p, ConsumerGroup: g,
		ShardCount: int32(state.ShardCount.ValueInt64()), MetadataVersion: state.MetadataVersion.ValueInt64()}
	if seen, _ := readGroupHighest(ctx, private); seen.MetadataVersion >= grp.MetadataVersion && seen.MetadataVersion > 0 {
		grp.ShardCount, grp.MetadataVersion = int32(seen.ShardCount), seen.MetadataVersion
	}
	return grp
}

// deletedWithListed takes this apply's listing's count, migration and liveness for
// a group about to be deleted, which the re-plan during apply puts back (its state's
// count may predate a stream scale; the refresh's record wins where it has one).
func (pd *providerData) deletedWithListed(ctx context.Context, grp client.Group) client.Group {
	all, err := pd.groupsForPlan(ctx)
	if err != nil {
		return grp
	}
	for _, gi := range all {
		if gi.StreamPrefix == grp.StreamPrefix && gi.ConsumerGroup == grp.ConsumerGroup {
			grp.ShardCount, grp.ActiveMigration, grp.State = gi.ShardCount, gi.ActiveMigration, gi.State
			break
		}
	}
	return grp
}

// withDeleted puts back the groups of rec's prefix this run deleted: a group
// created after them still takes the prefix's count from them.
func (r *planRegistry) withDeleted(rec prefix.Record) prefix.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := append([]client.Group(nil), rec.Groups...)
	for k, rg := range r.groups {
		if k.prefix == rec.Prefix && rg.deleted != nil && rec.Group(k.group) == nil {
			all = append(all, *rg.deleted)
		}
	}
	return prefix.FromListing(all, rec.Prefix)
}
