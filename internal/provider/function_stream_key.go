package provider

import (
	"context"
	"math"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

var _ function.Function = &streamKeyFunction{}

// NewStreamKeyFunction is provider::redisstreamcoordinator::stream_key.
func NewStreamKeyFunction() function.Function { return &streamKeyFunction{} }

type streamKeyFunction struct{}

func (f *streamKeyFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "stream_key"
}

func (f *streamKeyFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
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
	}
}

func (f *streamKeyFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var prefix string
	var index types.Number
	resp.Error = req.Arguments.Get(ctx, &prefix, &index)
	if resp.Error != nil {
		return
	}
	if msg := nameProblem("stream_prefix", prefix, true); msg != "" {
		resp.Error = function.NewArgumentFuncError(0, msg+" No group can have this stream prefix.")
		return
	}
	i, funcErr := wholeNumberArgument(index.ValueBigFloat(), 1, "shard_index", 0, math.MaxInt32, "")
	if funcErr != nil {
		resp.Error = funcErr
		return
	}
	resp.Error = resp.Result.Set(ctx, routing.StreamKey(prefix, int(i)))
}
