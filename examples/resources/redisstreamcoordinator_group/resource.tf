terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

# The order service's consumer group on the "orders" stream, with 8 shards:
# producers publish to the Redis streams orders:0 … orders:7.
resource "redisstreamcoordinator_group" "orders" {
  stream_prefix       = "orders"
  consumer_group      = "order-service"
  initial_shard_count = 8
  reason              = "order-service consumes the orders stream (PLAT-1234)"
}

# Created after its sibling (depends_on) and with its count, 8; the plan
# shows (known after apply), as the sibling does not exist yet.
resource "redisstreamcoordinator_group" "orders_analytics" {
  stream_prefix  = "orders"
  consumer_group = "order-analytics"
  reason         = "analytics reads the orders stream (PLAT-1240)"

  # Destroy deletes the group's metadata (the default, ABANDON, only forgets it).
  deletion_policy = "DELETE"

  timeouts {
    create = "2m"
    delete = "2m"
  }

  depends_on = [redisstreamcoordinator_group.orders]
}

output "orders_stream_key_pattern" {
  description = "Producers substitute the shard index into this pattern."
  value       = redisstreamcoordinator_group.orders.stream_key_pattern
}
