package provider

import (
	"context"
	"math"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

// NewStreamKeyFunction is provider::redisstreamcoordinator::stream_key.
func NewStreamKeyFunction() function.Function {
	return &providerFunction{name: "stream_key", run: streamKey, def: function.Definition{
		Summary:             "Redis stream key of one shard",
		MarkdownDescription: "Returns the Redis stream key of shard `shard_index` under `stream_prefix`: `<stream_prefix>:<shard_index>`, as the coordinator names shards. It does not check the index against the shard count.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "stream_prefix",
				MarkdownDescription: "The stream prefix: any name a group can have, so not blank, not `.` or `..`, and without `{`, `}` (the coordinator rejects hash tags), `/`, `;` or `%2F`.",
			},
			function.NumberParameter{
				Name:                "shard_index",
				MarkdownDescription: "The shard index: a whole number from 0 to 2147483647.",
			},
		},
		Return: function.StringReturn{},
	}}
}

func streamKey(ctx context.Context, args function.ArgumentsData) (any, *function.FuncError) {
	var prefix string
	var index types.Number
	if funcErr := args.Get(ctx, &prefix, &index); funcErr != nil {
		return nil, funcErr
	}
	if msg := nameProblem("stream_prefix", prefix, true); msg != "" {
		return nil, function.NewArgumentFuncError(0, msg+" No group can have this stream prefix.")
	}
	i, funcErr := wholeNumberArgument(index.ValueBigFloat(), 1, "shard_index", 0, math.MaxInt32, "")
	if funcErr != nil {
		return nil, funcErr
	}
	return routing.StreamKey(prefix, int(i)), nil
}
