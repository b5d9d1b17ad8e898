resource "redisstreamcoordinator_group" "orders" {
  stream_prefix       = "orders"
  consumer_group      = "order-service"
  initial_shard_count = 8
}

# The shard count of the orders stream. Changing it calls the coordinator's
# stream scale API, which rescales every consumer group under the prefix,
# and waits until each group's resharding migration has completed.
# Declare one shard count resource per stream prefix.
#
# The partition → shard mapping changes with the count: pause producers that
# cannot tolerate duplicates before applying (see the "Safe shard count
# changes" guide).
resource "redisstreamcoordinator_group_shard_count" "orders" {
  stream_prefix  = redisstreamcoordinator_group.orders.stream_prefix
  consumer_group = redisstreamcoordinator_group.orders.consumer_group
  shard_count    = 12
  reason         = "more consumer parallelism for the sale (PLAT-2345)"

  timeouts {
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
