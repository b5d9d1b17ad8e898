# The import id is {stream_prefix}/{consumer_group}.
import {
  to = redisstreamcoordinator_group_shard_count.orders
  id = "orders/order-service"
}
