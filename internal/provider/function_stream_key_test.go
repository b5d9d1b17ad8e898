package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

func TestStreamKeyFunction(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		prefix string
		index  float64
		want   string
	}{
		{"orders", 0, "orders:0"},
		{"orders", 5, "orders:5"},
		{"create-order", 4, "create-order:4"},
		{"tenant:eu.orders", 12, "tenant:eu.orders:12"},
		{"orders", 2147483647, "orders:2147483647"},
	} {
		got, funcErr := fnRun(t, NewStreamKeyFunction(), types.StringValue(tc.prefix), fnNumber(tc.index))
		if funcErr != nil || !got.Equal(types.StringValue(tc.want)) {
			t.Errorf("stream_key(%q, %v) = %v, %v; want %q", tc.prefix, tc.index, got, funcErr, tc.want)
		}
	}
}

func TestStreamKeyFunction_invalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		prefix  string
		index   float64
		wantArg int64
		want    string
	}{
		{"", 0, 0, "stream_prefix must not be empty."},
		{"orders{eu}", 0, 0, `stream_prefix "orders{eu}" contains a brace`},
		{"a/b", 0, 0, `stream_prefix "a/b" contains '/'`},
		{"orders", -1, 1, "shard_index must be at least 0; got -1."},
		{"orders", 1.5, 1, "shard_index must be a whole number; got 1.5."},
		{"orders", 2147483648, 1, "shard_index must be at most 2147483647; got 2147483648."},
	} {
		_, funcErr := fnRun(t, NewStreamKeyFunction(), types.StringValue(tc.prefix), fnNumber(tc.index))
		if funcErr == nil || !strings.Contains(funcErr.Text, tc.want) {
			t.Errorf("stream_key(%q, %v): error %v, want one containing %q", tc.prefix, tc.index, funcErr, tc.want)
			continue
		}
		if funcErr.FunctionArgument == nil || *funcErr.FunctionArgument != tc.wantArg {
			t.Errorf("stream_key(%q, %v): error points at argument %v, want %d", tc.prefix, tc.index, funcErr.FunctionArgument, tc.wantArg)
		}
	}
}

func TestAccFunctionStreamKey(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: `
output "orders_0"       { value = provider::redisstreamcoordinator::stream_key("orders", 0) }
output "create_order_4" { value = provider::redisstreamcoordinator::stream_key("create-order", 4) }
output "all_keys"       { value = [for i in range(3) : provider::redisstreamcoordinator::stream_key("orders", i)] }
`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("orders_0", knownvalue.StringExact("orders:0")),
					statecheck.ExpectKnownOutputValue("create_order_4", knownvalue.StringExact("create-order:4")),
					statecheck.ExpectKnownOutputValue("all_keys", knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringExact("orders:0"), knownvalue.StringExact("orders:1"), knownvalue.StringExact("orders:2"),
					})),
				},
			},
			{
				Config:      `output "x" { value = provider::redisstreamcoordinator::stream_key("orders{eu}", 0) }`,
				ExpectError: wrappedText(`stream_prefix "orders{eu}" contains a brace`),
			},
			{
				Config:      `output "x" { value = provider::redisstreamcoordinator::stream_key("", 0) }`,
				ExpectError: wrappedText(`stream_prefix must not be empty.`),
			},
			{
				Config:      `output "x" { value = provider::redisstreamcoordinator::stream_key("orders", -1) }`,
				ExpectError: wrappedText(`shard_index must be at least 0; got -1.`),
			},
			{
				Config:      `output "x" { value = provider::redisstreamcoordinator::stream_key("orders", 0.5) }`,
				ExpectError: wrappedText(`shard_index must be a whole number; got 0.5.`),
			},
		},
	})
}

func TestAccFunctionStreamKey_example(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			ConfigFile: config.StaticFile("../../examples/functions/stream_key/function.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orders_shard_5", knownvalue.StringExact("orders:5")),
				statecheck.ExpectKnownOutputValue("order_123_stream", knownvalue.StringExact("orders:5")),
			},
		}},
	})
}
