# Terraform 1.12 or later (and OpenTofu 1.12): import by the resource identity,
# the group's stream prefix and consumer group name. The string id
# "orders/order-service" works too, on every version.
import {
  to = redisstreamcoordinator_group.orders
  identity = {
    stream_prefix  = "orders"
    consumer_group = "order-service"
  }
}
