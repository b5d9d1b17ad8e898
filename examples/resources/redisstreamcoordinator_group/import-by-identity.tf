terraform {
  required_version = ">= 1.12" # import by identity; OpenTofu 1.12 too
}

import {
  to = redisstreamcoordinator_group.orders
  identity = {
    stream_prefix  = "orders"
    consumer_group = "order-service"
  }
}
