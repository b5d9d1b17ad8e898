# Before: the group is managed by the upstream stream-group module, a
# terraform_data resource that runs a bash/curl script on create.
variable "coordinator_password" {
  type      = string
  sensitive = true
}

module "orders_stream" {
  # Wherever your configuration takes the module from.
  source = "git::https://github.com/ghkdqhrbals/redis-stream-coordinator.git//terraform/modules/stream-group"

  coordinator_base_url = "https://stream-coordinator.internal:8080"
  coordinator_username = "terraform-ci"
  coordinator_password = var.coordinator_password
  stream_prefix        = "orders"
  consumer_group       = "order-service"
  shard_count          = 8
}
