# Terraform or OpenTofu 1.12 or later.
import {
  to = redisstreamcoordinator_group.orders
  identity = {
    stream_prefix  = "orders"
    consumer_group = "order-service"
  }
}
