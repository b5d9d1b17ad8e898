terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

# A principal with only the WRITE role; the password comes from
# REDIS_STREAM_COORDINATOR_PASSWORD (a CI secret).
provider "redisstreamcoordinator" {
  endpoint = "https://stream-coordinator.internal:8080"
  username = "terraform-ci"

  # One Bearer token per run instead of the password on every request.
  login = true

  # Request ids: platform-streams-<run id>-<operation>-<suffix>.
  requested_by      = "terraform:platform-streams"
  request_id_prefix = "platform-streams"
}
