package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"
)

// shardCountType is the resource whose planned changes carry the resharding
// preview.
const shardCountType = "redisstreamcoordinator_group_shard_count"

// reshardingPreview is the `resharding` attribute of a planned shard count
// change (see the resource's schema): the impact of the change, known at plan
// time and kept in the plan file.
type reshardingPreview struct {
	FromShardCount       *int64           `json:"from_shard_count"`
	ToShardCount         *int64           `json:"to_shard_count"`
	AffectedGroups       map[string]int64 `json:"affected_groups"`
	MovedKeyPercent      *float64         `json:"moved_key_percent"`
	CompletesByItself    *bool            `json:"completes_by_itself"`
	BlockedBy            *string          `json:"blocked_by"`
	BasisMetadataVersion *int64           `json:"basis_metadata_version"`
	PlanCheck            *string          `json:"plan_check"`
}

// printReshardingPreview prints the resharding preview of every shard count
// change in a saved plan (the output of `terraform show -json tfplan`), as a
// reviewer reads it from the plan file rather than from console warnings,
// which a plan file does not keep. It returns how many changes it printed,
// and fails when a change of the shard count carries no complete preview.
func printReshardingPreview(w io.Writer, planJSON []byte) (int, error) {
	var plan tfjson.Plan
	if err := json.Unmarshal(planJSON, &plan); err != nil {
		return 0, fmt.Errorf("decode terraform show -json: %w", err)
	}
	n := 0
	for _, rc := range plan.ResourceChanges {
		if rc.Type != shardCountType || rc.Mode != tfjson.ManagedResourceMode || rc.Change == nil || !changesCount(rc.Change.Actions) {
			continue
		}
		after, _ := rc.Change.After.(map[string]any)
		if after == nil {
			return n, fmt.Errorf("%s: the saved plan has no planned values", rc.Address)
		}
		raw, ok := after["resharding"]
		if !ok {
			return n, fmt.Errorf("%s: the saved plan has no resharding attribute: this provider build does not preview the resharding in the plan", rc.Address)
		}
		if raw == nil {
			fmt.Fprintf(w, "    %s (%s): stream %v, %v shards: no resharding (nothing changes on the coordinator)\n",
				rc.Address, actionWord(rc.Change.Actions), after["stream_prefix"], after["shard_count"])
			n++
			continue
		}
		var r reshardingPreview
		b, err := json.Marshal(raw)
		if err == nil {
			err = json.Unmarshal(b, &r)
		}
		if err != nil {
			return n, fmt.Errorf("%s: decode resharding: %w", rc.Address, err)
		}
		if err := r.complete(); err != nil {
			return n, fmt.Errorf("%s: %w", rc.Address, err)
		}
		fmt.Fprintf(w, "    %s (%s): stream %v, %d → %d shards\n", rc.Address, actionWord(rc.Change.Actions), after["stream_prefix"], *r.FromShardCount, *r.ToShardCount)
		fmt.Fprintf(w, "      moved keys:          %s%% of partition keys change shard\n", strconv.FormatFloat(*r.MovedKeyPercent, 'f', -1, 64))
		fmt.Fprintf(w, "      affected groups:     %s\n", groupList(r.AffectedGroups))
		switch {
		case r.CompletesByItself == nil:
			// A scale-out's outcome depends on consumers, which join and leave before the apply.
			fmt.Fprintf(w, "      completes by itself: known after apply (it depends on consumers; the plan's warning has it as read at plan time)\n")
		case *r.CompletesByItself:
			fmt.Fprintf(w, "      completes by itself: yes\n")
		default:
			fmt.Fprintf(w, "      completes by itself: no: %s\n", deref(r.BlockedBy))
		}
		basis := "unknown"
		if r.BasisMetadataVersion != nil {
			basis = strconv.FormatInt(*r.BasisMetadataVersion, 10)
		}
		fmt.Fprintf(w, "      based on:            metadataVersion %s (%s)\n", basis, deref(r.PlanCheck))
		n++
	}
	if n == 0 {
		fmt.Fprintln(w, "    (the plan changes no shard count)")
	}
	return n, nil
}

// complete reports the first preview value a reviewer needs that the saved
// plan does not carry.
func (r reshardingPreview) complete() error {
	for _, f := range []struct {
		name    string
		missing bool
	}{
		{"from_shard_count", r.FromShardCount == nil}, {"to_shard_count", r.ToShardCount == nil},
		{"affected_groups", r.AffectedGroups == nil}, {"moved_key_percent", r.MovedKeyPercent == nil},
	} {
		if f.missing {
			return fmt.Errorf("resharding.%s is not known in the saved plan (plan check: %s)", f.name, deref(r.PlanCheck))
		}
	}
	return nil
}

// changesCount: the planned action can change the shard count (a create
// scales an existing group, an update or a replacement changes the count).
func changesCount(a tfjson.Actions) bool {
	return a.Create() || a.Update() || a.Replace()
}

func actionWord(a tfjson.Actions) string {
	switch {
	case a.Replace():
		return "replace"
	case a.Create():
		return "create"
	case a.Update():
		return "update"
	}
	return fmt.Sprint(a)
}

// groupList is "a (4 shards), b (4 shards)", sorted by group.
func groupList(groups map[string]int64) string {
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, g := range names {
		parts[i] = fmt.Sprintf("%s (%d shards)", g, groups[g])
	}
	return strings.Join(parts, ", ")
}
