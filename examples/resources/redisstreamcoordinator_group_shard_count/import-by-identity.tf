# Terraform or OpenTofu 1.12 or later.
import {
  to = redisstreamcoordinator_group_shard_count.orders
  identity = {
    stream_prefix  = "orders"
    consumer_group = "order-service"
  }
}
