terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1"
    }
  }
}

# The shard count of the orders stream, whose consumer group order-service
# already runs with 8 shards and live consumers. Changing the count calls the
# coordinator's stream scale API, which rescales every consumer group under
# the prefix, and waits until each group's resharding migration has
# completed. Declare one shard count resource per stream prefix.
#
# A scale-out completes only once a live consumer of each group has taken
# over the new shards: scale groups whose consumers already run. A group
# created in the same apply has none yet (see with-new-group.tf).
#
# The partition → shard mapping changes with the count: pause producers that
# cannot tolerate duplicates before applying (see the "Safe shard count
# changes" guide). The plan shows the impact in the `resharding` attribute.
resource "redisstreamcoordinator_group_shard_count" "orders" {
  stream_prefix  = "orders"
  consumer_group = "order-service"
  shard_count    = 12
  reason         = "more consumer parallelism for the sale (PLAT-2345)"

  timeouts {
    # The first apply of a new shard count resource scales in Create (8 → 12
    # here); later changes of shard_count run in Update.
    create = "15m"
    update = "15m"
  }
}

output "orders_migration" {
  description = "Resharding id per affected consumer group and the migration's final state."
  value = {
    ids   = redisstreamcoordinator_group_shard_count.orders.migration_ids
    state = redisstreamcoordinator_group_shard_count.orders.migration_state
  }
}
