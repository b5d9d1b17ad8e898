package provider

import (
	"context"
	"sort"
	"sync"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// planRegistry records what the resources of one provider configuration plan
// during one Terraform operation. Terraform serves every resource of a
// provider configuration from one provider process per walk, so it sees each
// plan of the run: a shard count can tell that its group is created by this
// configuration, and two shard counts of one stream prefix see each other.
type planRegistry struct {
	mu           sync.Mutex
	groupCreates map[groupKey]plannedGroupCreate
	shardCounts  map[string]map[string]int // stream prefix → consumer group → shard-count plans
	// managed are groups in state planned in this run, true when destroying
	// them deletes them on the coordinator (deletion_policy DELETE).
	managed map[groupKey]bool
	// replaced are groups in state that this run's plan renames (another
	// consumer group or prefix) with deletion_policy DELETE: Terraform
	// deletes them before it creates the new name (destroy-then-create).
	replaced map[groupKey]bool
	// created and deleted are the groups this provider created and deleted
	// in this run (deleted with the shard count it had), so that an
	// apply-time plan reconstructs what the plan saw.
	created map[groupKey]int32 // with the count created
	deleted map[groupKey]client.Group
	// vanished are the vanished groups whose no-op delete ran: Terraform
	// plans the create of a -/+ again during apply, after the delete, with
	// no private state, and that plan must keep the saved plan's recreation.
	vanished map[groupKey]*groupVanished
}

func (r *planRegistry) registerVanished(p, g string, v *groupVanished) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.vanished == nil {
		r.vanished = map[groupKey]*groupVanished{}
	}
	r.vanished[groupKey{p, g}] = v
}

func (r *planRegistry) vanishedInRun(p, g string) *groupVanished {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.vanished[groupKey{p, g}]
}

// registerManaged notes a group in state that this run plans.
func (r *planRegistry) registerManaged(p, g string, deletes bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.managed == nil {
		r.managed = map[groupKey]bool{}
	}
	r.managed[groupKey{p, g}] = deletes
}

// registerReplaced notes a group in state that this run replaces and whose
// replacement deletes it.
func (r *planRegistry) registerReplaced(p, g string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.replaced == nil {
		r.replaced = map[groupKey]bool{}
	}
	r.replaced[groupKey{p, g}] = true
}

// registerDeleted notes a group this provider deletes in this run, as the
// refresh before the delete saw it, before the delete is sent.
func (r *planRegistry) registerDeleted(grp client.Group) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.deleted == nil {
		r.deleted = map[groupKey]client.Group{}
	}
	r.deleted[groupKey{grp.StreamPrefix, grp.ConsumerGroup}] = grp
}

// registerCreated notes a group this provider created in this run, with its
// shard count.
func (r *planRegistry) registerCreated(p, g string, shardCount int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.created == nil {
		r.created = map[groupKey]int32{}
	}
	r.created[groupKey{p, g}] = shardCount
}

// createdInRun is the groups of prefix p this provider created in this run,
// with their counts.
func (r *planRegistry) createdInRun(p string) map[string]int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int32{}
	for k, c := range r.created {
		if k.prefix == p {
			out[k.group] = c
		}
	}
	return out
}

// ownInRun reports a group of prefix p this run creates (planned or done),
// deletes or replaces: a change of it is the run's own, not a change behind
// the plan's back.
func (r *planRegistry) ownInRun(p, g string) bool {
	_, created := r.createdInRun(p)[g]
	_, planned := r.plannedGroupCreate(p, g)
	return created || planned || r.deletedInRun(p, g)
}

// deletedInRun reports a group this provider deleted in this run (or is
// deleting: consulted only for a group found gone).
func (r *planRegistry) deletedInRun(p, g string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.deleted[groupKey{p, g}]
	return ok
}

// renamedAway reports a group this run's plan renames with deletion_policy
// DELETE (registerReplaced).
func (r *planRegistry) renamedAway(p, g string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.replaced[groupKey{p, g}]
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
		if _, createdHere := r.created[groupKey{p, grp.ConsumerGroup}]; grp.StreamPrefix == p && !createdHere {
			out[grp.ConsumerGroup] = run.AsPlanned(grp)
		}
	}
	_, deletedSelf := r.deleted[groupKey{p, g}]
	for k, grp := range r.deleted {
		if k.prefix == p {
			out[k.group] = grp
		}
	}
	return out, deletedSelf
}

// deletedBeforeCreate reports a group in state whose replacement deletes it
// before creating it again.
func (r *planRegistry) deletedBeforeCreate(p, g string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.managed[groupKey{p, g}]
}

type groupKey struct{ prefix, group string }

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
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groupCreates == nil {
		r.groupCreates = map[groupKey]plannedGroupCreate{}
	}
	c := r.groupCreates[groupKey{p, g}]
	c.InitialShardCount = initial
	r.groupCreates[groupKey{p, g}] = c
}

// registerGroupCreateOfPrefix notes the planned create of group {p, g} and,
// in the same step, returns the other creates of prefix p planned so far:
// of two creates planned at once, the later one always sees the earlier.
func (r *planRegistry) registerGroupCreateOfPrefix(p, g string, c plannedGroupCreate) map[string]plannedGroupCreate {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groupCreates == nil {
		r.groupCreates = map[groupKey]plannedGroupCreate{}
	}
	r.groupCreates[groupKey{p, g}] = c
	out := map[string]plannedGroupCreate{}
	for k, o := range r.groupCreates {
		if k.prefix == p && k.group != g {
			out[k.group] = o
		}
	}
	return out
}

// plannedGroupCreate reports whether this run plans to create group {p, g}
// (among the resources planned so far: a resource that references the group
// is planned after it).
func (r *planRegistry) plannedGroupCreate(p, g string) (plannedGroupCreate, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.groupCreates[groupKey{p, g}]
	return c, ok
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
	for k, grp := range r.deleted {
		if k.prefix == rec.Prefix && rec.Group(k.group) == nil {
			all = append(all, grp)
		}
	}
	return prefix.FromListing(all, rec.Prefix)
}
