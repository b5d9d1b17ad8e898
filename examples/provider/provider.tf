terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1"
    }
  }
}

# Terraform authenticates as a dedicated coordinator principal that holds only
# the WRITE role (WRITE includes READ). Keep the password out of the
# configuration: export REDIS_STREAM_COORDINATOR_PASSWORD, e.g. from a CI secret.
provider "redisstreamcoordinator" {
  endpoint = "https://stream-coordinator.internal:8080"
  username = "terraform-ci"

  # Exchange the password for a Bearer token once per run instead of sending
  # it with every request.
  login = true

  # Recorded with every mutation in the coordinator's audit log. Request ids
  # become platform-streams-<run id>-<operation>-<suffix>; the run id is taken
  # from the CI system (GITHUB_RUN_ID, TFC_RUN_ID, CI_PIPELINE_ID, ...).
  requested_by      = "terraform:platform-streams"
  request_id_prefix = "platform-streams"
}
