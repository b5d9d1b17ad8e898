# The import id is {stream_prefix}/{consumer_group}.
terraform import redisstreamcoordinator_group_shard_count.orders orders/order-service
