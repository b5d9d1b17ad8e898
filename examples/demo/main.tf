# The configuration `make demo` applies against a throwaway in-repo
# coordinator: two streams with their consumer groups, and a shard count
# change on one of them.
terraform {
  required_version = ">= 1.8"

  required_providers {
    redisstreamcoordinator = {
      source = "ghkdqhrbals/redisstreamcoordinator"
    }
  }
}

# The endpoint and the WRITE principal's credentials come from
# REDIS_STREAM_COORDINATOR_ENDPOINT, _USERNAME and _PASSWORD, which the demo
# sets for its coordinator, as a CI job would from its secrets.
provider "redisstreamcoordinator" {
  requested_by = "terraform:demo"
}

resource "redisstreamcoordinator_group" "orders" {
  stream_prefix       = "orders"
  consumer_group      = "order-service"
  initial_shard_count = 4
  reason              = "demo: order-service consumes the orders stream"
}

resource "redisstreamcoordinator_group" "payments" {
  stream_prefix       = "payments"
  consumer_group      = "payment-service"
  initial_shard_count = 2
  reason              = "demo: payment-service consumes the payments stream"
}

# Scale the orders stream out from 4 to 8 shards. The provider waits until
# the resharding migration has really completed: the demo runs a consumer
# of order-service that takes over the new shards. The payments stream, on
# another prefix, is not touched.
resource "redisstreamcoordinator_group_shard_count" "orders" {
  stream_prefix  = redisstreamcoordinator_group.orders.stream_prefix
  consumer_group = redisstreamcoordinator_group.orders.consumer_group
  shard_count    = 8
  reason         = "demo: more consumer parallelism for orders"
}

output "orders_shard_count" {
  value = redisstreamcoordinator_group_shard_count.orders.shard_count
}

output "orders_migration_state" {
  value = redisstreamcoordinator_group_shard_count.orders.migration_state
}

# Where a producer publishes the message with partition key "order-123"
# after the scale, computed with the coordinator's routing (Terraform >= 1.8).
output "order_123_stream_key" {
  value = provider::redisstreamcoordinator::stream_key(
    redisstreamcoordinator_group.orders.stream_prefix,
    provider::redisstreamcoordinator::shard_for_key("order-123", redisstreamcoordinator_group_shard_count.orders.shard_count),
  )
}
