# The streams configuration of the pull-request workflow guide, as a pull
# request changes it: the orders stream goes from 8 to 12 shards, and the
# payment service moves to a new stream, payments-v2 (a re-creation of its
# group). The provider block carries no credentials: each CI job sets the
# principal it runs as (READ to plan, WRITE to apply) in the environment.
terraform {
  required_version = ">= 1.11"

  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1"
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

# The change under review: 8 → 12 shards. It rescales both groups of the
# orders stream; the plan's `resharding` attribute says so.
resource "redisstreamcoordinator_group_shard_count" "orders" {
  stream_prefix  = redisstreamcoordinator_group.orders.stream_prefix
  consumer_group = redisstreamcoordinator_group.orders.consumer_group
  shard_count    = 12
  reason         = "more consumer parallelism for the sale (PLAT-2345)"

  timeouts {
    update = "20m"
  }
}

# Was stream_prefix = "payments": changing it replaces the group. With the
# default deletion_policy (ABANDON) the old group stays on the coordinator
# until its consumers have moved and someone deletes it.
resource "redisstreamcoordinator_group" "payments" {
  stream_prefix       = "payments-v2"
  consumer_group      = "payment-service"
  initial_shard_count = 4
  reason              = "payment-service moves to the payments-v2 stream (PLAT-2410)"
}
