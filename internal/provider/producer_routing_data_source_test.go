package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/routing"
)

func TestAccProducerRoutingDataSource(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	p, g := acctest.RandomName("orders"), acctest.RandomName("svc")
	dsCreateGroup(t, env, p, g, 3)

	const ds = "data.redisstreamcoordinator_producer_routing.this"
	config := env.ProviderConfigAs(env.Reader) + fmt.Sprintf(`
data "redisstreamcoordinator_producer_routing" "this" {
  stream_prefix  = %q
  consumer_group = %q
}
`, p, g)
	shard := func(i int) knownvalue.Check {
		key := fmt.Sprintf("%s:%d", p, i)
		return knownvalue.ObjectExact(map[string]knownvalue.Check{
			"shard_index": knownvalue.Int64Exact(int64(i)),
			"stream_key":  knownvalue.StringExact(key),
			"redis_slot":  knownvalue.Int64Exact(int64(routing.Slot(key))),
		})
	}
	var versionBefore int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(3)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("stream_key_pattern"), knownvalue.StringExact(p+":{shardIndex}")),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("metadata_version"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("shards"), knownvalue.ListExact([]knownvalue.Check{shard(0), shard(1), shard(2)})),
				},
			},
			{
				// Drained to 0 shards: no route, and an empty (not null) list.
				PreConfig: func() { versionBefore = groupValueNow(t, env, p, g, metadataVersionOf); dsScaleOutOfBand(t, env, p, 0) },
				Config:    config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(0)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("metadata_version"), groupValueSince(env, p, g, "metadata_version", metadataVersionOf, &versionBefore, true)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("shards"), knownvalue.ListSizeExact(0)),
				},
			},
			{
				Config: env.ProviderConfigAs(env.Reader) + fmt.Sprintf(`
data "redisstreamcoordinator_producer_routing" "this" {
  stream_prefix  = %q
  consumer_group = "no-such-group"
}
`, p),
				ExpectError: wrappedText(fmt.Sprintf(`Group "no-such-group" under stream prefix %q not found`, p)),
			},
		},
	})
}

func TestAccProducerRoutingDataSource_example(t *testing.T) {
	env := dsExampleEnv(t)
	dsCreateGroup(t, env, "orders", "order-service", 3)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: dsExampleConfig(t, env, "redisstreamcoordinator_producer_routing"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orders_stream_keys", knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact("orders:0"), knownvalue.StringExact("orders:1"), knownvalue.StringExact("orders:2"),
				})),
			},
		}},
	})
}
