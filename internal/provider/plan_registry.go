package provider

import (
	"context"
	"sort"
	"sync"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// planRegistry is what one run does to each group: the provider
// configuration's resources are served by one provider process per
// Terraform operation, which sees each of the run's plans and applies.
// Terraform plans again during apply, after some of the run's creates and
// deletes, and a plan made then must give the values the first one gave: it
// reads here what the run itself did. Besides, the shard count resources
// planned per stream prefix, so that two of one prefix see each other.
type planRegistry struct {
	mu          sync.Mutex
	groups      map[groupKey]*runGroup
	shardCounts map[string]map[string]int // stream prefix → consumer group → shard-count plans
}

// runGroup is what the run does to one group.
type runGroup struct {
	// create is the run's planned create of the group; nil when none.
	create *plannedGroupCreate
	// deletesOnReplace: the group is in state, planned in this run, with
	// deletion_policy DELETE: replacing it deletes it before creating it.
	deletesOnReplace bool
	// renamedAway: this run renames the group (another consumer group or
	// prefix) with deletion_policy DELETE: Terraform deletes it first.
	renamedAway bool
	// created is the count this provider created the group with in this
	// run; nil when it did not.
	created *int32
	// deleted is the group as the run's plan saw it, once this provider
	// deleted it in this run; nil when it did not.
	deleted *client.Group
	// vanished is the vanished group whose no-op delete ran: Terraform
	// plans the create of a -/+ again during apply, after the delete, with
	// no private state, and that plan must keep the saved plan's recreation.
	vanished *groupVanished
}

// own reports a group the run creates (planned or done) or deletes: a
// change of it is the run's own, not a change behind the plan's back.
func (rg runGroup) own() bool { return rg.create != nil || rg.created != nil || rg.deleted != nil }

type groupKey struct{ prefix, group string }

// note records something the run does to group {p, g}.
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

// of is what the run does to group {p, g} (among the resources planned or
// applied so far: a resource that references a group comes after it).
func (r *planRegistry) of(p, g string) runGroup {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rg := r.groups[groupKey{p, g}]; rg != nil {
		return *rg
	}
	return runGroup{}
}

// planBasisOfPrefix is prefix p's groups as the coordinator had them when
// this run was planned, from a listing taken now: the groups this provider
// created since are left out, the ones it deleted are put back (as they
// were), and the ones this run's own change of the prefix moved have the
// count its plan showed (prefix.Run.AsPlanned). deletedSelf: g is one of
// those deleted (a -replace, after its delete).
func planBasisOfPrefix(r *planRegistry, run *prefix.Run, groups []client.Group, p, g string) (map[string]client.Group, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]client.Group{}
	for _, grp := range groups {
		if rg := r.groups[groupKey{p, grp.ConsumerGroup}]; grp.StreamPrefix == p && (rg == nil || rg.created == nil) {
			out[grp.ConsumerGroup] = run.AsPlanned(grp)
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

// plannedGroupCreate is a group this run plans to create; InitialShardCount
// is nil when the count is not known at plan time.
type plannedGroupCreate struct {
	InitialShardCount *int64
	// Unset: the configuration sets no initial_shard_count (the create
	// inherits its siblings' count, or takes the coordinator's default).
	Unset bool
}

// registerGroupCreate notes that this run plans to create group {p, g}.
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

// registerGroupCreateOfPrefix notes the planned create of group {p, g} and,
// in the same step, returns the other creates of prefix p planned so far:
// of two creates planned at once, the later one always sees the earlier.
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

// registerShardCount notes a shard-count plan for group {p, g} and returns
// every consumer group of the prefix with a shard-count plan in this run,
// sorted, with a name repeated once per extra plan of the same group. More
// than one entry means the configuration manages the prefix's count twice.
func (r *planRegistry) registerShardCount(p, g string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shardCounts == nil {
		r.shardCounts = map[string]map[string]int{}
	}
	if r.shardCounts[p] == nil {
		r.shardCounts[p] = map[string]int{}
	}
	r.shardCounts[p][g]++
	var all []string
	for name, n := range r.shardCounts[p] {
		for i := 0; i < n; i++ {
			all = append(all, name)
		}
	}
	sort.Strings(all)
	return all
}

// deletedAsPlanned is the group as the plan of this run saw it, for the
// creates this apply plans again after deleting it (planBasisOfPrefix). The
// refresh does not raise the shard_count attribute (scales through
// redisstreamcoordinator_group_shard_count are not changes of this
// resource), so the count the plan saw is the refresh's record in private
// state (groupHighest), not the attribute: after a scale, the attribute
// still has the count before it.
func deletedAsPlanned(ctx context.Context, private privateGetter, p, g string, state groupResourceModel) client.Group {
	grp := client.Group{StreamPrefix: p, ConsumerGroup: g,
		ShardCount: int32(state.ShardCount.ValueInt64()), MetadataVersion: state.MetadataVersion.ValueInt64()}
	if seen, _ := readGroupHighest(ctx, private); seen.MetadataVersion >= grp.MetadataVersion && seen.MetadataVersion > 0 {
		grp.ShardCount, grp.MetadataVersion = int32(seen.ShardCount), seen.MetadataVersion
	}
	return grp
}

// deletedWithListed completes a group about to be deleted (deletedAsPlanned:
// count and version only) with its migration under way and liveness as the
// run's listing has them, read before the delete is sent. A shard count
// update whose refresh kept no record of the prefix (its listing failed)
// assessed blocked_by from the plan's listing, a sibling's PREPARING
// migration included, and Terraform's re-plan during apply, after this apply
// deleted the sibling (a rename or a removal with deletion_policy DELETE),
// puts it back from the registry (withDeletedInRun): without them the
// sibling came back with no migration, and the re-plan would disagree with
// the saved plan. Best effort: without a listing the record stays as it is.
func (pd *providerData) deletedWithListed(ctx context.Context, grp client.Group) client.Group {
	all, err := pd.groupsForPlan(ctx)
	if err != nil {
		return grp
	}
	for _, gi := range all {
		if gi.StreamPrefix == grp.StreamPrefix && gi.ConsumerGroup == grp.ConsumerGroup {
			grp.ActiveMigration, grp.State = gi.ActiveMigration, gi.State
			break
		}
	}
	return grp
}

// withDeleted puts back into rec the groups of its prefix this run deleted
// (a replacement's or a rename's old group) that are gone from it: a group
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
