# Terraform 1.12 or later (and OpenTofu 1.12): import by the resource identity.
# Importing records the group's current shard count; a different shard_count
# in the configuration then plans a scale.
import {
  to = redisstreamcoordinator_group_shard_count.orders
  identity = {
    stream_prefix  = "orders"
    consumer_group = "order-service"
  }
}
