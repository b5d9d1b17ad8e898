terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

resource "redisstreamcoordinator_group" "payments" {
  stream_prefix       = "payments"
  consumer_group      = "payment-service"
  initial_shard_count = 4
  reason              = "payment-service consumes the payments stream (PLAT-2400)"
}

# Equal to initial_shard_count: this apply scales nothing.
resource "redisstreamcoordinator_group_shard_count" "payments" {
  stream_prefix  = redisstreamcoordinator_group.payments.stream_prefix
  consumer_group = redisstreamcoordinator_group.payments.consumer_group
  shard_count    = 4
  reason         = "payments shard count managed by Terraform (PLAT-2400)"
}
