terraform {
  required_version = ">= 1.11"
  required_providers {
    redisstreamcoordinator = {
      source = "ghkdqhrbals/redisstreamcoordinator"
    }
  }
}

# 8578
output "orders_0_slot" {
  value = provider::redisstreamcoordinator::redis_slot("orders:0")
}

# Redis Cluster slot of every shard of a 4-shard "orders" stream, e.g. to
# check that the shards spread over the cluster's nodes.
output "orders_slots" {
  value = {
    for i in range(4) :
    provider::redisstreamcoordinator::stream_key("orders", i) => provider::redisstreamcoordinator::redis_slot(provider::redisstreamcoordinator::stream_key("orders", i))
  }
}
