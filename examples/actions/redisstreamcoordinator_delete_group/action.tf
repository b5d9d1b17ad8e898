terraform {
  required_version = ">= 1.14" # actions; OpenTofu has none

  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1"
    }
  }
}

# REDIS_STREAM_COORDINATOR_ENDPOINT, _USERNAME and _PASSWORD come from the
# environment: a READ principal to plan, the WRITE principal to invoke.
provider "redisstreamcoordinator" {
  requested_by = "terraform:streams"
}

# Delete the group that replacing payments/payment-service with a group on
# payments-v2 left behind (the group resource's default deletion_policy,
# ABANDON, keeps the old group on the coordinator).
#
#   terraform plan  -invoke=action.redisstreamcoordinator_delete_group.old_payments
#   terraform apply -invoke=action.redisstreamcoordinator_delete_group.old_payments
#
# The plan shows the group, its shard count, its live members and whether
# force is needed. The delete is refused while consumers are live unless
# force = true, which makes them fail their next heartbeat.
action "redisstreamcoordinator_delete_group" "old_payments" {
  config {
    stream_prefix  = "payments"
    consumer_group = "payment-service"
    reason         = "PLAT-1301: payment-service moved to payments-v2; the old group is no longer read"
  }
}
