terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

data "redisstreamcoordinator_group" "orders" {
  stream_prefix  = "orders"
  consumer_group = "order-service"
}

output "orders_shard_count" {
  value = data.redisstreamcoordinator_group.orders.shard_count
}

# A scale is finished only once no migration is active.
output "orders_resharding" {
  value = data.redisstreamcoordinator_group.orders.active_migration != null
}
