# Coordinator health in plans.
#
# Run `terraform plan` in CI with a READ principal:
#   REDIS_STREAM_COORDINATOR_ENDPOINT, REDIS_STREAM_COORDINATOR_USERNAME and
#   REDIS_STREAM_COORDINATOR_PASSWORD in the environment.
#
# - The check block only warns: plan and apply go on.
# - The data source postconditions are errors: they fail the plan, so nothing
#   is changed against an unhealthy coordinator or group.
#
# Test `status` only. The coordinator checks Redis asynchronously and caches
# the result for 1 s, so `redis` may read UNKNOWN on a first call; `status`
# already turns DEGRADED when Redis is DOWN (it is never DOWN itself).

terraform {
  required_version = ">= 1.11"
  required_providers {
    redisstreamcoordinator = {
      source = "ghkdqhrbals/redisstreamcoordinator"
    }
  }
}

provider "redisstreamcoordinator" {}

variable "stream_prefix" {
  type        = string
  description = "Stream prefix of the group whose assignments gate the plan."
}

variable "consumer_group" {
  type        = string
  description = "Consumer group whose assignments gate the plan."
}

# Warns when the coordinator is not UP.
check "coordinator_health" {
  data "redisstreamcoordinator_health" "now" {}

  assert {
    condition     = data.redisstreamcoordinator_health.now.status == "UP"
    error_message = "Coordinator ${data.redisstreamcoordinator_health.now.coordinator_id} reports ${data.redisstreamcoordinator_health.now.status} (redis ${data.redisstreamcoordinator_health.now.redis})."
  }
}

# Fails the plan when the coordinator is not UP.
data "redisstreamcoordinator_health" "gate" {
  lifecycle {
    postcondition {
      condition     = self.status == "UP"
      error_message = "Coordinator ${self.coordinator_id} is ${self.status} (redis ${self.redis}); refusing to plan changes against it."
    }
  }
}

# Fails the plan when the group's assignments break an invariant.
data "redisstreamcoordinator_assignments" "gate" {
  stream_prefix  = var.stream_prefix
  consumer_group = var.consumer_group

  lifecycle {
    postcondition {
      condition     = length(self.invariant_violations) == 0
      error_message = "Group ${var.consumer_group} of ${var.stream_prefix} violates assignment invariants: ${join("; ", self.invariant_violations)}"
    }
  }
}
