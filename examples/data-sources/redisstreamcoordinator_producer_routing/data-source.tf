terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

data "redisstreamcoordinator_producer_routing" "orders" {
  stream_prefix  = "orders"
  consumer_group = "order-service"
}

# The Redis stream keys producers write to, e.g. for an application's settings.
output "orders_stream_keys" {
  value = data.redisstreamcoordinator_producer_routing.orders.shards[*].stream_key
}
