package demo

import (
	"bytes"
	"strings"
	"testing"
)

// A saved plan as `terraform show -json` writes it, reduced to the resource
// changes: a scale-out that completes by itself, a create on an existing
// group whose scale-out cannot, a shard count equal to the group's, and a
// change of another resource type.
const previewPlanJSON = `{
  "format_version": "1.2", "terraform_version": "1.11.4",
  "resource_changes": [
    {"address": "redisstreamcoordinator_group.orders", "mode": "managed", "type": "redisstreamcoordinator_group", "name": "orders",
     "change": {"actions": ["no-op"], "before": {"shard_count": 4}, "after": {"shard_count": 4}}},
    {"address": "redisstreamcoordinator_group_shard_count.orders", "mode": "managed", "type": "redisstreamcoordinator_group_shard_count", "name": "orders",
     "change": {"actions": ["update"], "before": {"stream_prefix": "orders", "shard_count": 4, "resharding": null},
       "after": {"stream_prefix": "orders", "shard_count": 8, "resharding": {
         "from_shard_count": 4, "to_shard_count": 8, "affected_groups": {"order-service": 4, "order-analytics": 4},
         "moved_key_percent": 50, "completes_by_itself": true, "blocked_by": null, "basis_metadata_version": 3,
         "plan_check": "read from the coordinator at plan time"}}}},
    {"address": "redisstreamcoordinator_group_shard_count.invoices", "mode": "managed", "type": "redisstreamcoordinator_group_shard_count", "name": "invoices",
     "change": {"actions": ["create"], "before": null,
       "after": {"stream_prefix": "invoices", "shard_count": 12, "resharding": {
         "from_shard_count": 8, "to_shard_count": 12, "affected_groups": {"invoice-service": 8},
         "moved_key_percent": 66.67, "completes_by_itself": false,
         "blocked_by": "scale-out with no live consumer in group \"invoice-service\": the migration stays ACTIVE until a consumer joins",
         "basis_metadata_version": 5, "plan_check": "read from the coordinator at plan time"}}}},
    {"address": "redisstreamcoordinator_group_shard_count.refunds", "mode": "managed", "type": "redisstreamcoordinator_group_shard_count", "name": "refunds",
     "change": {"actions": ["create"], "before": null, "after": {"stream_prefix": "refunds", "shard_count": 2, "resharding": null}}}
  ]
}`

func TestReshardingPreviewFromSavedPlan(t *testing.T) {
	var out bytes.Buffer
	n, err := printReshardingPreview(&out, []byte(previewPlanJSON))
	if err != nil {
		t.Fatal(err)
	}
	want := `    redisstreamcoordinator_group_shard_count.orders (update): stream orders, 4 → 8 shards
      moved keys:          50% of partition keys change shard
      affected groups:     order-analytics (4 shards), order-service (4 shards)
      completes by itself: yes
      based on:            metadataVersion 3 (read from the coordinator at plan time)
    redisstreamcoordinator_group_shard_count.invoices (create): stream invoices, 8 → 12 shards
      moved keys:          66.67% of partition keys change shard
      affected groups:     invoice-service (8 shards)
      completes by itself: no: scale-out with no live consumer in group "invoice-service": the migration stays ACTIVE until a consumer joins
      based on:            metadataVersion 5 (read from the coordinator at plan time)
    redisstreamcoordinator_group_shard_count.refunds (create): stream refunds, 2 shards: no resharding (nothing changes on the coordinator)
`
	if out.String() != want || n != 3 {
		t.Errorf("preview (%d changes):\n%s\nwant (3 changes):\n%s", n, out.String(), want)
	}
}

// A provider build whose plan carries no resharding attribute fails the
// demo instead of printing nothing.
func TestReshardingPreviewFailsWithoutThePreview(t *testing.T) {
	plan := `{"format_version": "1.2", "resource_changes": [
	  {"address": "redisstreamcoordinator_group_shard_count.orders", "mode": "managed", "type": "redisstreamcoordinator_group_shard_count",
	   "change": {"actions": ["update"], "before": {"shard_count": 4}, "after": {"stream_prefix": "orders", "shard_count": 8}}}]}`
	_, err := printReshardingPreview(&bytes.Buffer{}, []byte(plan))
	if err == nil || !strings.Contains(err.Error(), "no resharding attribute") {
		t.Errorf("err = %v, want the missing-preview error", err)
	}
}

// A preview whose impact is not known at plan time fails the demo, naming
// the missing value and how the preview was obtained.
func TestReshardingPreviewFailsOnAnIncompletePreview(t *testing.T) {
	plan := `{"format_version": "1.2", "resource_changes": [
	  {"address": "redisstreamcoordinator_group_shard_count.orders", "mode": "managed", "type": "redisstreamcoordinator_group_shard_count",
	   "change": {"actions": ["update"], "before": {"shard_count": 4}, "after": {"stream_prefix": "orders", "shard_count": 8,
	     "resharding": {"from_shard_count": null, "to_shard_count": 8, "affected_groups": null, "moved_key_percent": null,
	       "completes_by_itself": null, "blocked_by": null, "basis_metadata_version": null,
	       "plan_check": "skipped: the provider configuration is unknown until apply"}}}}]}`
	_, err := printReshardingPreview(&bytes.Buffer{}, []byte(plan))
	if err == nil || !strings.Contains(err.Error(), "resharding.from_shard_count is not known in the saved plan (plan check: skipped") {
		t.Errorf("err = %v, want the incomplete-preview error", err)
	}
}

func TestReshardingPreviewOfAPlanWithoutShardCountChanges(t *testing.T) {
	var out bytes.Buffer
	n, err := printReshardingPreview(&out, []byte(`{"format_version": "1.2", "resource_changes": []}`))
	if err != nil || n != 0 || out.String() != "    (the plan changes no shard count)\n" {
		t.Errorf("n = %d, err = %v, output %q", n, err, out.String())
	}
}
