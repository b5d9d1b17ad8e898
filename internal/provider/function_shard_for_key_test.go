package provider

import (
	"context"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

// fnRun calls f.Run the way the framework does and returns its result.
func fnRun(t *testing.T, f function.Function, args ...attr.Value) (attr.Value, *function.FuncError) {
	t.Helper()
	ctx := context.Background()
	var def function.DefinitionResponse
	f.Definition(ctx, function.DefinitionRequest{}, &def)
	if len(def.Definition.Parameters) != len(args) {
		t.Fatalf("definition has %d parameters, test passes %d arguments", len(def.Definition.Parameters), len(args))
	}
	result, funcErr := def.Definition.Return.NewResultData(ctx)
	if funcErr != nil {
		t.Fatalf("NewResultData: %v", funcErr)
	}
	resp := function.RunResponse{Result: result}
	f.Run(ctx, function.RunRequest{Arguments: function.NewArgumentsData(args)}, &resp)
	return resp.Result.Value(), resp.Error
}

func fnNumber(f float64) types.Number { return types.NumberValue(big.NewFloat(f)) }

// wrappedText matches words across whatever line wrapping Terraform applies.
func wrappedText(s string) *regexp.Regexp {
	parts := strings.Fields(s)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, `\s+`))
}

// The worked examples of the coordinator's routing contract (routeV1), as
// computed by the Python client; the last one exercises the re-seed path.
var shardForKeyExamples = []struct {
	key   string
	count float64
	want  int64
}{
	{"order-123", 8, 5},
	{"customer-42", 12, 1},
	{"user:alice", 20, 10},
	{"order-123", 10, 1},
	{"order-0", 1500000000, 1284531674},
}

func TestShardForKeyFunction(t *testing.T) {
	t.Parallel()
	for _, ex := range shardForKeyExamples {
		got, funcErr := fnRun(t, NewShardForKeyFunction(), types.StringValue(ex.key), fnNumber(ex.count))
		if funcErr != nil {
			t.Fatalf("shard_for_key(%q, %v): %v", ex.key, ex.count, funcErr)
		}
		if !got.Equal(types.Int64Value(ex.want)) {
			t.Errorf("shard_for_key(%q, %v) = %v, want %d", ex.key, ex.count, got, ex.want)
		}
	}
	// The upper bound is inclusive: 2^32 shards is a power of two, so the
	// shard is the raw hash.
	got, funcErr := fnRun(t, NewShardForKeyFunction(), types.StringValue("k"), fnNumber(1<<32))
	if funcErr != nil || !got.Equal(types.Int64Value(int64(routing.Murmur3([]byte("k"), 0)))) {
		t.Errorf("shard_for_key(\"k\", 2^32) = %v, %v; want the raw murmur3 hash", got, funcErr)
	}
}

func TestShardForKeyFunction_invalidShardCount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		count types.Number
		want  string
	}{
		{fnNumber(0), "shard_count must be at least 1; got 0. A group drained to 0 shards has no route"},
		{fnNumber(-3), "shard_count must be at least 1; got -3."},
		{fnNumber(2.5), "shard_count must be a whole number; got 2.5."},
		{fnNumber(1<<32 + 1), "shard_count must be at most 4294967296; got 4294967297."},
		{types.NumberValue(new(big.Float).SetMantExp(big.NewFloat(1), 200)), "shard_count must be at most 4294967296"},
	} {
		_, funcErr := fnRun(t, NewShardForKeyFunction(), types.StringValue("k"), tc.count)
		if funcErr == nil || !strings.Contains(funcErr.Text, tc.want) {
			t.Errorf("shard_for_key(\"k\", %v): error %v, want one containing %q", tc.count, funcErr, tc.want)
			continue
		}
		if funcErr.FunctionArgument == nil || *funcErr.FunctionArgument != 1 {
			t.Errorf("shard_for_key(\"k\", %v): error points at argument %v, want 1 (shard_count)", tc.count, funcErr.FunctionArgument)
		}
	}
}

func TestAccFunctionShardForKey(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: `
output "order_123_of_8"         { value = provider::redisstreamcoordinator::shard_for_key("order-123", 8) }
output "customer_42_of_12"      { value = provider::redisstreamcoordinator::shard_for_key("customer-42", 12) }
output "user_alice_of_20"       { value = provider::redisstreamcoordinator::shard_for_key("user:alice", 20) }
output "order_123_of_10"        { value = provider::redisstreamcoordinator::shard_for_key("order-123", 10) }
output "order_0_of_1500000000"  { value = provider::redisstreamcoordinator::shard_for_key("order-0", 1500000000) }
output "single_shard"           { value = provider::redisstreamcoordinator::shard_for_key("anything", 1) }
output "order_123_key"          { value = provider::redisstreamcoordinator::stream_key("orders", provider::redisstreamcoordinator::shard_for_key("order-123", 8)) }
`,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("order_123_of_8", knownvalue.Int64Exact(5)),
					statecheck.ExpectKnownOutputValue("customer_42_of_12", knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownOutputValue("user_alice_of_20", knownvalue.Int64Exact(10)),
					statecheck.ExpectKnownOutputValue("order_123_of_10", knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownOutputValue("order_0_of_1500000000", knownvalue.Int64Exact(1284531674)),
					statecheck.ExpectKnownOutputValue("single_shard", knownvalue.Int64Exact(0)),
					statecheck.ExpectKnownOutputValue("order_123_key", knownvalue.StringExact("orders:5")),
				},
			},
			{
				Config:      `output "x" { value = provider::redisstreamcoordinator::shard_for_key("order-123", 0) }`,
				ExpectError: wrappedText(`shard_count must be at least 1; got 0. A group drained to 0 shards has no route`),
			},
			{
				Config:      `output "x" { value = provider::redisstreamcoordinator::shard_for_key("order-123", 2.5) }`,
				ExpectError: wrappedText(`shard_count must be a whole number; got 2.5.`),
			},
			{
				Config:      `output "x" { value = provider::redisstreamcoordinator::shard_for_key("order-123", 4294967297) }`,
				ExpectError: wrappedText(`shard_count must be at most 4294967296; got 4294967297.`),
			},
			{
				Config:      `output "x" { value = provider::redisstreamcoordinator::shard_for_key(null, 8) }`,
				ExpectError: wrappedText(`partition_key`),
			},
		},
	})
}

func TestAccFunctionShardForKey_example(t *testing.T) {
	var moving []knownvalue.Check
	for _, key := range []string{"order-123", "customer-42", "user:alice"} {
		before, _ := routing.ShardForKey(key, 8)
		after, _ := routing.ShardForKey(key, 12)
		if before != after {
			moving = append(moving, knownvalue.StringExact(key))
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_8_0)},
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			ConfigFile: config.StaticFile("../../examples/functions/shard_for_key/function.tf"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("order_123_shard", knownvalue.Int64Exact(5)),
				statecheck.ExpectKnownOutputValue("keys_moving_on_scale", knownvalue.ListExact(moving)),
			},
		}},
	})
}
