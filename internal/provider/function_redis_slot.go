package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

var _ function.Function = &redisSlotFunction{}

// NewRedisSlotFunction is provider::redisstreamcoordinator::redis_slot.
func NewRedisSlotFunction() function.Function { return &redisSlotFunction{} }

type redisSlotFunction struct{}

func (f *redisSlotFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "redis_slot"
}

func (f *redisSlotFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary:             "Redis Cluster hash slot of a key",
		MarkdownDescription: "Returns the Redis Cluster hash slot (0 to 16383) of `key`, hash tags (`{...}`) honoured, as Redis computes it: `redis_slot(stream_key(p, i))` is the slot of shard `i`.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "key",
				MarkdownDescription: "The Redis key, for example a shard's stream key `orders:0`.",
			},
		},
		Return: function.Int64Return{},
	}
}

func (f *redisSlotFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var key string
	resp.Error = req.Arguments.Get(ctx, &key)
	if resp.Error != nil {
		return
	}
	resp.Error = resp.Result.Set(ctx, int64(routing.Slot(key)))
}
