terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

# Every group a stream-level scale of "orders" rescales together.
data "redisstreamcoordinator_groups" "orders" {
  stream_prefix = "orders"
}

output "orders_shard_counts" {
  value = { for g in data.redisstreamcoordinator_groups.orders.groups : g.consumer_group => g.shard_count }
}
