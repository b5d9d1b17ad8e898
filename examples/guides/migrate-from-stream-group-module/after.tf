# After: the module call is gone. The same group is managed by the provider's
# resources, adopted by import blocks; nothing is sent to the coordinator
# except reads.
terraform {
  required_version = ">= 1.11"

  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1"
    }
  }
}

provider "redisstreamcoordinator" {
  endpoint = "https://stream-coordinator.internal:8080"
  username = "terraform-ci"
}

# 1. Forget the module's terraform_data resource without destroying it.
#    Replace the address with the one `terraform state list` shows for your
#    module call (module.<name>.terraform_data.<resource name>).
removed {
  from = module.orders_stream.terraform_data.stream_group

  lifecycle {
    destroy = false
  }
}

# 2. Adopt the existing group and its shard count. The import id is
#    {stream_prefix}/{consumer_group}: the module's `id` output.
import {
  to = redisstreamcoordinator_group.orders
  id = "orders/order-service"
}

import {
  to = redisstreamcoordinator_group_shard_count.orders
  id = "orders/order-service"
}

# 3. Describe the group as it is today, with the module's inputs: the plan
#    must show the imports and no changes.
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
