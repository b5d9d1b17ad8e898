package provider

import (
	"sort"
	"sync"
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
}

// registerGroupCreate notes that this run plans to create group {p, g}.
func (r *planRegistry) registerGroupCreate(p, g string, initial *int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.groupCreates == nil {
		r.groupCreates = map[groupKey]plannedGroupCreate{}
	}
	r.groupCreates[groupKey{p, g}] = plannedGroupCreate{InitialShardCount: initial}
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
