terraform {
  required_version = ">= 1.14" # actions; OpenTofu has none

  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

# REDIS_STREAM_COORDINATOR_ENDPOINT, _USERNAME and _PASSWORD come from the
# environment: a READ principal to plan, the WRITE principal to invoke.
provider "redisstreamcoordinator" {
  requested_by = "terraform:streams"
}

# The group a replacement by payments-v2 left behind under ABANDON.
action "redisstreamcoordinator_delete_group" "old_payments" {
  config {
    stream_prefix  = "payments"
    consumer_group = "payment-service"
    reason         = "PLAT-1301: payment-service moved to payments-v2; the old group is no longer read"
  }
}
