package provider

import (
	"context"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

var _ function.Function = &providerFunction{}

// providerFunction is a function of the provider: run decodes its arguments
// and returns its result.
type providerFunction struct {
	name string
	def  function.Definition
	run  func(ctx context.Context, args function.ArgumentsData) (any, *function.FuncError)
}

func (f *providerFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = f.name
}

func (f *providerFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = f.def
}

func (f *providerFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	result, funcErr := f.run(ctx, req.Arguments)
	if resp.Error = funcErr; funcErr == nil {
		resp.Error = resp.Result.Set(ctx, result)
	}
}

// routeV1 maps 32-bit hashes onto shards.
const maxRouteShardCount = int64(1) << 32

// NewShardForKeyFunction is provider::redisstreamcoordinator::shard_for_key.
func NewShardForKeyFunction() function.Function {
	return &providerFunction{name: "shard_for_key", run: shardForKey, def: function.Definition{
		Summary: "Shard index a producer writes a partition key to",
		MarkdownDescription: "The shard index that producers write `partition_key` to when the group has `shard_count` shards, computed as the coordinator's routing (`routeV1`, MurmurHash3-based) does. With `stream_key`, it shows where keys move before a scale.\n\n" +
			"Terraform normalizes strings to Unicode NFC: a key whose bytes are not NFC may route differently in a producer.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "partition_key",
				MarkdownDescription: "The partition key, as the producer passes it.",
			},
			function.NumberParameter{
				Name: "shard_count",
				MarkdownDescription: "The group's shard count: a whole number from 1 to 4294967296. A group drained to 0 shards " +
					"has no route.",
			},
		},
		Return: function.Int64Return{},
	}}
}

func shardForKey(ctx context.Context, args function.ArgumentsData) (any, *function.FuncError) {
	var key string
	var count types.Number
	if funcErr := args.Get(ctx, &key, &count); funcErr != nil {
		return nil, funcErr
	}
	n, funcErr := wholeNumberArgument(count.ValueBigFloat(), 1, "shard_count", 1, maxRouteShardCount,
		"A group drained to 0 shards has no route: producers refuse to publish to it.")
	if funcErr != nil {
		return nil, funcErr
	}
	shard, err := routing.ShardForKey(key, n)
	if err != nil {
		return nil, function.NewArgumentFuncError(1, err.Error())
	}
	return shard, nil
}

func wholeNumberArgument(v *big.Float, position int64, name string, lowest, highest int64, belowHint string) (int64, *function.FuncError) {
	if v == nil {
		return 0, function.NewArgumentFuncError(position, name+" must not be null.")
	}
	if !v.IsInt() {
		return 0, function.NewArgumentFuncError(position, fmt.Sprintf("%s must be a whole number; got %s.", name, v.Text('g', -1)))
	}
	if v.Cmp(new(big.Float).SetInt64(lowest)) < 0 {
		msg := fmt.Sprintf("%s must be at least %d; got %s.", name, lowest, v.Text('f', 0))
		if belowHint != "" {
			msg += " " + belowHint
		}
		return 0, function.NewArgumentFuncError(position, msg)
	}
	if v.Cmp(new(big.Float).SetInt64(highest)) > 0 {
		return 0, function.NewArgumentFuncError(position, fmt.Sprintf("%s must be at most %d; got %s.", name, highest, v.Text('f', 0)))
	}
	n, _ := v.Int64()
	return n, nil
}
