# The import id is {stream_prefix}/{consumer_group}.
terraform import redisstreamcoordinator_group.orders orders/order-service
