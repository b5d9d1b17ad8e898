resource "redisstreamcoordinator_group" "order_service" {
  stream_prefix       = "legacy-orders"
  consumer_group      = "order-service"
  initial_shard_count = 4
}

resource "redisstreamcoordinator_group" "order_analytics" {
  stream_prefix  = "legacy-orders"
  consumer_group = "order-analytics"
  depends_on     = [redisstreamcoordinator_group.order_service]
}

resource "redisstreamcoordinator_group_shard_count" "orders" {
  stream_prefix  = redisstreamcoordinator_group.order_service.stream_prefix
  consumer_group = redisstreamcoordinator_group.order_service.consumer_group
  shard_count    = 4
}

resource "redisstreamcoordinator_group" "payment_service" {
  stream_prefix       = "legacy-payments"
  consumer_group      = "payment-service"
  initial_shard_count = 2
}

resource "redisstreamcoordinator_group_shard_count" "payments" {
  stream_prefix  = redisstreamcoordinator_group.payment_service.stream_prefix
  consumer_group = redisstreamcoordinator_group.payment_service.consumer_group
  shard_count    = 2
}
