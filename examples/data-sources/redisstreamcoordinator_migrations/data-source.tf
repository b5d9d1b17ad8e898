terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

data "redisstreamcoordinator_migrations" "orders" {
  stream_prefix  = "orders"
  consumer_group = "order-service"
}

output "orders_migration_in_progress" {
  value = data.redisstreamcoordinator_migrations.orders.active_resharding_id
}

output "orders_resharding_history" {
  value = [
    for m in data.redisstreamcoordinator_migrations.orders.migrations :
    "${m.from_shard_count} -> ${m.to_shard_count}: ${m.state}"
  ]
}
