package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

type producerRoutingModel struct {
	StreamPrefix     string       `tfsdk:"stream_prefix"`
	ConsumerGroup    string       `tfsdk:"consumer_group"`
	ShardCount       int64        `tfsdk:"shard_count"`
	StreamKeyPattern string       `tfsdk:"stream_key_pattern"`
	MetadataVersion  int64        `tfsdk:"metadata_version"`
	Shards           []shardModel `tfsdk:"shards"`
}

type shardModel struct {
	ShardIndex int64  `tfsdk:"shard_index"`
	StreamKey  string `tfsdk:"stream_key"`
	RedisSlot  int64  `tfsdk:"redis_slot"`
}

// NewProducerRoutingDataSource is the redisstreamcoordinator_producer_routing data source.
func NewProducerRoutingDataSource() datasource.DataSource {
	return &readDataSource{
		name: "producer_routing", lookup: true, read: lookupRead("producer routing", (*client.Client).ProducerRouting, producerRoutingOf),
		description: "Reads the routing producers publish with (`READ` role). With stream provisioning on, the read re-creates missing shard streams and may fail with `503 REDIS_*`.",
		attrs: map[string]schema.Attribute{
			"shard_count":        computedInt64("Number of shards producers route to, switched when a scale is accepted. `0`: drained; producers refuse to publish."),
			"stream_key_pattern": computedString("`<stream_prefix>:{shardIndex}`: substitute the decimal shard index for the literal `{shardIndex}`."),
			"metadata_version":   computedInt64("Version of the routing metadata; producers compare it to detect a changed shard count."),
			"shards": schema.ListNestedAttribute{
				MarkdownDescription: "Every shard, by index from 0 to `shard_count - 1`; empty when `shard_count` is 0.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"shard_index": computedInt64("Shard index."),
					"stream_key":  computedString("Redis stream key of the shard, `<stream_prefix>:<shard_index>` (no hash tag)."),
					"redis_slot":  computedInt64("Redis Cluster hash slot of `stream_key` (CRC16/XMODEM mod 16384)."),
				}},
			},
		},
	}
}

func producerRoutingOf(p, g string, routing *client.ProducerRouting) any {
	model := producerRoutingModel{
		StreamPrefix:     p,
		ConsumerGroup:    g,
		ShardCount:       int64(routing.ShardCount),
		StreamKeyPattern: routing.StreamKeyPattern,
		MetadataVersion:  routing.MetadataVersion,
		Shards:           make([]shardModel, 0, len(routing.Shards)),
	}
	for _, s := range routing.Shards {
		model.Shards = append(model.Shards, shardModel{ShardIndex: int64(s.ShardIndex), StreamKey: s.StreamKey, RedisSlot: int64(s.RedisSlot)})
	}
	return model
}
