# After: the same group, adopted by import blocks.
terraform {
  required_version = ">= 1.11"

  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

provider "redisstreamcoordinator" {
  endpoint = "https://stream-coordinator.internal:8080"
  username = "terraform-ci"
}

# 1. Forget the module's resource (the address `terraform state list` shows).
removed {
  from = module.orders_stream.terraform_data.stream_group

  lifecycle {
    destroy = false
  }
}

# 2. Adopt the group and its shard count (the module's `id` output).
import {
  to = redisstreamcoordinator_group.orders
  id = "orders/order-service"
}

import {
  to = redisstreamcoordinator_group_shard_count.orders
  id = "orders/order-service"
}

# 3. The group as it is: the count the coordinator reports (the module's
#    shard_count input may be stale: the module scaled only at create).
resource "redisstreamcoordinator_group" "orders" {
  stream_prefix       = "orders"
  consumer_group      = "order-service"
  initial_shard_count = 8
}

resource "redisstreamcoordinator_group_shard_count" "orders" {
  stream_prefix  = redisstreamcoordinator_group.orders.stream_prefix
  consumer_group = redisstreamcoordinator_group.orders.consumer_group
  shard_count    = 8
}
