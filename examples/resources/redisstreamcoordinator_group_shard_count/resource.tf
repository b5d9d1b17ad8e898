terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

# orders runs with 8 shards and live consumers; one resource per prefix.
resource "redisstreamcoordinator_group_shard_count" "orders" {
  stream_prefix  = "orders"
  consumer_group = "order-service"
  shard_count    = 12
  reason         = "more consumer parallelism for the sale (PLAT-2345)"

  timeouts {
    # The first apply scales in Create (8 → 12 here); later changes in Update.
    create = "15m"
    update = "15m"
  }
}

output "orders_migration" {
  description = "Resharding id per affected consumer group and the migration's final state (DEPRECATED: completed)."
  value = {
    ids = redisstreamcoordinator_group_shard_count.orders.migration_ids
    # "DEPRECATED" means completed: the coordinator's name for a finished migration.
    state = redisstreamcoordinator_group_shard_count.orders.migration_state
  }
}
