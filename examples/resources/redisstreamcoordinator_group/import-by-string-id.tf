# The import id is {stream_prefix}/{consumer_group}.
import {
  to = redisstreamcoordinator_group.orders
  id = "orders/order-service"
}
