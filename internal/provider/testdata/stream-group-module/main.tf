# Test stand-in for the upstream terraform/modules/stream-group module: the
# same inputs and the same kind of state (one terraform_data resource), but
# no local-exec script. The test creates the group out of band, as that
# script would have.
variable "coordinator_base_url" { type = string }
variable "coordinator_username" { type = string }
variable "coordinator_password" {
  type      = string
  sensitive = true
}
variable "stream_prefix" { type = string }
variable "consumer_group" { type = string }
variable "shard_count" { type = number }

resource "terraform_data" "stream_group" {
  triggers_replace = [var.coordinator_base_url, var.stream_prefix, var.consumer_group, var.shard_count]
}

output "id" {
  value = "${var.stream_prefix}/${var.consumer_group}"
}
