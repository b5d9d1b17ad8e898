package prefix

import "github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"

// Scale is a step of a run's executor that takes a prefix to Target. The run
// journals its steps per prefix under the prefix lock before each send, so
// other resources of the run can tell its own changes from a stale plan. A
// step whose send was refused before any change is struck out; others stay,
// since a lost answer may have landed.
type Scale struct {
	Target int32
	// Planned is the groups' counts as the plan showed them; nil when it could not.
	Planned map[string]int64
}

// Scales is what a run journaled for one prefix, in order.
type Scales []Scale

// Explains reports that a step took group n from was to now.
func (ss Scales) Explains(n string, was, now int64) bool {
	for _, st := range ss {
		if c, ok := st.Planned[n]; int64(st.Target) == now && (st.Planned == nil || ok && c == was) {
			return true
		}
	}
	return false
}

// AsPlanned is grp as the plan of the last step that showed it saw it.
func (ss Scales) AsPlanned(grp client.Group) client.Group {
	for i := len(ss) - 1; i >= 0; i-- {
		was, ok := ss[i].Planned[grp.ConsumerGroup]
		if !ok {
			continue
		}
		if am := grp.ActiveMigration; grp.ShardCount == ss[i].Target || (!am.Finished() && am.ToShardCount == ss[i].Target) {
			grp.ShardCount = int32(was)
		}
		break
	}
	return grp
}
