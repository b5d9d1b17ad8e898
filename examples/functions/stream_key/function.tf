terraform {
  required_version = ">= 1.11"
  required_providers {
    redisstreamcoordinator = {
      source = "ghkdqhrbals/redisstreamcoordinator"
    }
  }
}

# "orders:5"
output "orders_shard_5" {
  value = provider::redisstreamcoordinator::stream_key("orders", 5)
}

# The stream a partition key lands on: "orders:5" for "order-123" with 8 shards.
output "order_123_stream" {
  value = provider::redisstreamcoordinator::stream_key("orders", provider::redisstreamcoordinator::shard_for_key("order-123", 8))
}
