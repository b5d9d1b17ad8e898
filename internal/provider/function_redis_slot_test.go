package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

// Slot checks from the coordinator's routing contract; "123456789" is the
// CRC-16/XMODEM check value 0x31C3.
var redisSlotExamples = map[string]int64{
	"foo":            12182,
	"123456789":      0x31C3,
	"orders:0":       8578,
	"orders:1":       12707,
	"orders:5":       12583,
	"create-order:4": 9068,
}

func TestRedisSlotFunction(t *testing.T) {
	t.Parallel()
	for key, want := range redisSlotExamples {
		got, funcErr := fnRun(t, NewRedisSlotFunction(), types.StringValue(key))
		if funcErr != nil || !got.Equal(types.Int64Value(want)) {
			t.Errorf("redis_slot(%q) = %v, %v; want %d", key, got, funcErr, want)
		}
	}
	// Only a non-empty hash tag is hashed.
	tagged, _ := fnRun(t, NewRedisSlotFunction(), types.StringValue("{foo}:orders:0"))
	if !tagged.Equal(types.Int64Value(12182)) {
		t.Errorf("redis_slot(\"{foo}:orders:0\") = %v, want the slot of \"foo\" (12182)", tagged)
	}
}

func TestAccFunctionRedisSlot(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
output "foo"            { value = provider::redisstreamcoordinator::redis_slot("foo") }
output "check_value"    { value = provider::redisstreamcoordinator::redis_slot("123456789") }
output "orders_0"       { value = provider::redisstreamcoordinator::redis_slot("orders:0") }
output "orders_1"       { value = provider::redisstreamcoordinator::redis_slot("orders:1") }
output "create_order_4" { value = provider::redisstreamcoordinator::redis_slot("create-order:4") }
output "hash_tag"       { value = provider::redisstreamcoordinator::redis_slot("{foo}.bar") }
# The slot of the shard that routeV1 picks for "order-123" among 8 shards (orders:5).
output "order_123_slot" {
  value = provider::redisstreamcoordinator::redis_slot(
    provider::redisstreamcoordinator::stream_key("orders", provider::redisstreamcoordinator::shard_for_key("order-123", 8)))
}
`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("foo", knownvalue.Int64Exact(12182)),
				statecheck.ExpectKnownOutputValue("check_value", knownvalue.Int64Exact(0x31C3)),
				statecheck.ExpectKnownOutputValue("orders_0", knownvalue.Int64Exact(8578)),
				statecheck.ExpectKnownOutputValue("orders_1", knownvalue.Int64Exact(12707)),
				statecheck.ExpectKnownOutputValue("create_order_4", knownvalue.Int64Exact(9068)),
				statecheck.ExpectKnownOutputValue("hash_tag", knownvalue.Int64Exact(12182)),
				statecheck.ExpectKnownOutputValue("order_123_slot", knownvalue.Int64Exact(12583)),
			},
		}},
	})
}

func TestAccFunctionRedisSlot_example(t *testing.T) {
	slots := map[string]knownvalue.Check{}
	for i := range 4 {
		key := routing.StreamKey("orders", i)
		slots[key] = knownvalue.Int64Exact(int64(routing.Slot(key)))
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			ConfigFile: config.StaticFile("../../examples/functions/redis_slot/function.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orders_0_slot", knownvalue.Int64Exact(8578)),
				statecheck.ExpectKnownOutputValue("orders_slots", knownvalue.MapExact(slots)),
			},
		}},
	})
}
