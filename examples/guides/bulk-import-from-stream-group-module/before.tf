# Before: one stream-group module call per group, driven by one map.
variable "coordinator_password" {
  type      = string
  sensitive = true
}

variable "stream_groups" {
  description = "Every group the module manages, by a key of your choosing."
  type = map(object({
    stream_prefix  = string
    consumer_group = string
    shard_count    = number
  }))
}

module "stream_group" {
  # Wherever your configuration takes the module from.
  source   = "git::https://github.com/ghkdqhrbals/redis-stream-coordinator.git//terraform/modules/stream-group"
  for_each = var.stream_groups

  coordinator_base_url = "https://stream-coordinator.internal:8080"
  coordinator_username = "terraform-ci"
  coordinator_password = var.coordinator_password
  stream_prefix        = each.value.stream_prefix
  consumer_group       = each.value.consumer_group
  shard_count          = each.value.shard_count
}
