package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

// NewRedisSlotFunction is provider::redisstreamcoordinator::redis_slot.
func NewRedisSlotFunction() function.Function {
	return &providerFunction{name: "redis_slot", def: function.Definition{
		Summary:             "Redis Cluster hash slot of a key",
		MarkdownDescription: "Returns the Redis Cluster hash slot (0 to 16383) of `key`, hash tags (`{...}`) honoured, as Redis computes it: `redis_slot(stream_key(p, i))` is the slot of shard `i`.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "key",
				MarkdownDescription: "The Redis key, for example a shard's stream key `orders:0`.",
			},
		},
		Return: function.Int64Return{},
	}, run: func(ctx context.Context, args function.ArgumentsData) (any, *function.FuncError) {
		var key string
		if funcErr := args.Get(ctx, &key); funcErr != nil {
			return nil, funcErr
		}
		return int64(routing.Slot(key)), nil
	}}
}
