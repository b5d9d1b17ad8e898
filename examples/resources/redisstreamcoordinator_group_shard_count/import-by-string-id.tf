# The import id is {stream_prefix}/{consumer_group}. Importing records the
# group's current shard count; a different shard_count in the configuration
# then plans a scale.
import {
  to = redisstreamcoordinator_group_shard_count.orders
  id = "orders/order-service"
}
