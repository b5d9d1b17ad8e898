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

# Every group of the prefix; add consumer_group = "..." for one group only.
action "redisstreamcoordinator_rollback_migration" "orders" {
  config {
    stream_prefix = "orders"
    reason        = "INC-4711: the scale-out to 12 shards overloads the order database; roll back while allowed"
  }
}
