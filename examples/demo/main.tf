# The configuration `make demo` applies against a throwaway in-repo
# coordinator, and the README's "Try it" against `make sandbox`: two streams
# with their consumer groups, then, in a second plan, a shard count change
# of one of them.
terraform {
  required_version = ">= 1.11"

  required_providers {
    redisstreamcoordinator = {
      source = "ghkdqhrbals/redisstreamcoordinator"
    }
  }
}

# The endpoint and the WRITE principal's credentials come from
# REDIS_STREAM_COORDINATOR_ENDPOINT, _USERNAME and _PASSWORD, which the demo
# sets for its coordinator (make sandbox prints them), as a CI job would from
# its secrets.
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

# The shard count of the orders stream. The first apply creates the group
# with 4 shards and leaves the count as it is: a new group has no consumers
# yet, and a scale-out completes only once a consumer takes over the new
# shards. The change to 8 comes in a second, reviewed plan
# (-var=orders_shard_count=8), once the demo's consumer of order-service
# runs; its saved plan carries the resharding preview (the `resharding`
# attribute), and the apply waits until the migration has completed. The
# payments stream, on another prefix, is not touched.
variable "orders_shard_count" {
  type        = number
  description = "Shard count of the orders stream."
  default     = 4
}

resource "redisstreamcoordinator_group_shard_count" "orders" {
  stream_prefix  = redisstreamcoordinator_group.orders.stream_prefix
  consumer_group = redisstreamcoordinator_group.orders.consumer_group
  shard_count    = var.orders_shard_count
  reason         = "demo: more consumer parallelism for orders"

  timeouts {
    update = "5m"
  }
}

output "orders_shard_count" {
  value = redisstreamcoordinator_group_shard_count.orders.shard_count
}

output "orders_migration_state" {
  description = "DEPRECATED means the migration completed (the coordinator's name for a finished migration)."
  value       = redisstreamcoordinator_group_shard_count.orders.migration_state
}

# Where a producer publishes the message with partition key "order-123"
# after the scale, computed with the coordinator's routing (Terraform >= 1.8).
output "order_123_stream_key" {
  value = provider::redisstreamcoordinator::stream_key(
    redisstreamcoordinator_group.orders.stream_prefix,
    provider::redisstreamcoordinator::shard_for_key("order-123", redisstreamcoordinator_group_shard_count.orders.shard_count),
  )
}
