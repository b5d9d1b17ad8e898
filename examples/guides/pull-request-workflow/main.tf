# As a pull request changes it: orders goes from 8 to 12 shards, and
# payment-service moves to payments-v2 (a re-creation of its group).
terraform {
  required_version = ">= 1.11"

  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

# REDIS_STREAM_COORDINATOR_ENDPOINT, _USERNAME and _PASSWORD come from the job.
provider "redisstreamcoordinator" {
  requested_by = "terraform:streams"
}

resource "redisstreamcoordinator_group" "orders" {
  stream_prefix       = "orders"
  consumer_group      = "order-service"
  initial_shard_count = 8
  reason              = "order-service consumes the orders stream (PLAT-1234)"
}

resource "redisstreamcoordinator_group" "orders_analytics" {
  stream_prefix  = "orders"
  consumer_group = "order-analytics"
  reason         = "analytics reads the orders stream (PLAT-1240)"

  depends_on = [redisstreamcoordinator_group.orders]
}

# 8 → 12 shards: rescales both groups of orders (see `resharding`).
resource "redisstreamcoordinator_group_shard_count" "orders" {
  stream_prefix  = redisstreamcoordinator_group.orders.stream_prefix
  consumer_group = redisstreamcoordinator_group.orders.consumer_group
  shard_count    = 12
  reason         = "more consumer parallelism for the sale (PLAT-2345)"

  timeouts {
    update = "20m"
  }
}

# Was "payments": a replacement. Under ABANDON (the default) the old group
# stays on the coordinator until someone deletes it.
resource "redisstreamcoordinator_group" "payments" {
  stream_prefix       = "payments-v2"
  consumer_group      = "payment-service"
  initial_shard_count = 4
  reason              = "payment-service moves to the payments-v2 stream (PLAT-2410)"
}
