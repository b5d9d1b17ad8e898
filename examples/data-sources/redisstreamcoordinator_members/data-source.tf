terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

data "redisstreamcoordinator_members" "orders" {
  stream_prefix  = "orders"
  consumer_group = "order-service"
}

# A scale-out only finishes once a live consumer takes the new shards.
check "orders_has_live_consumers" {
  assert {
    condition     = data.redisstreamcoordinator_members.orders.live_count > 0
    error_message = "No live consumer in group order-service of orders: a scale-out would stay ACTIVE."
  }
}

output "orders_live_members" {
  value = [for m in data.redisstreamcoordinator_members.orders.members : m.member_id if m.live]
}
