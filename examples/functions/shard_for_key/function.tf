terraform {
  required_version = ">= 1.11"
  required_providers {
    redisstreamcoordinator = {
      source = "ghkdqhrbals/redisstreamcoordinator"
    }
  }
}

# The shard a producer writes partition key "order-123" to with 8 shards: 5.
output "order_123_shard" {
  value = provider::redisstreamcoordinator::shard_for_key("order-123", 8)
}

# Which of these keys change shards when "orders" scales from 8 to 12 shards.
# Producers that cannot tolerate reordering must pause around such a scale.
output "keys_moving_on_scale" {
  value = [
    for key in ["order-123", "customer-42", "user:alice"] : key
    if provider::redisstreamcoordinator::shard_for_key(key, 8) != provider::redisstreamcoordinator::shard_for_key(key, 12)
  ]
}
