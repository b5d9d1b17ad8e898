terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

# Steps 3 and 4: scale, wait, check the routing producers will pick up.
variable "orders_shard_count" {
  type        = number
  description = "Shard count of the orders stream after the change."
  default     = 12
}

resource "redisstreamcoordinator_group_shard_count" "orders" {
  stream_prefix  = "orders"
  consumer_group = "order-service"
  shard_count    = var.orders_shard_count
  reason         = "scale orders to ${var.orders_shard_count} shards (CHG-4711)"

  wait_for = "COMPLETION" # the default

  timeouts {
    # A resource added for a running group scales in Create.
    create = "20m"
    update = "20m"
  }
}

# Read after the scale (depends_on): routing shows the new count, and no
# migration is still active.
data "redisstreamcoordinator_producer_routing" "orders" {
  stream_prefix  = "orders"
  consumer_group = "order-service"

  depends_on = [redisstreamcoordinator_group_shard_count.orders]

  lifecycle {
    postcondition {
      condition     = self.shard_count == var.orders_shard_count
      error_message = "Producer routing of orders does not show ${var.orders_shard_count} shards."
    }
  }
}

data "redisstreamcoordinator_migrations" "orders" {
  stream_prefix  = "orders"
  consumer_group = "order-service"

  depends_on = [redisstreamcoordinator_group_shard_count.orders]

  lifecycle {
    postcondition {
      condition     = self.active_resharding_id == null
      error_message = "A resharding of orders is still active; do not resume duplicate-sensitive producers yet."
    }
  }
}

output "orders_stream_keys" {
  description = "The Redis stream keys producers publish to once they refreshed their routing."
  value       = data.redisstreamcoordinator_producer_routing.orders.shards[*].stream_key
}
