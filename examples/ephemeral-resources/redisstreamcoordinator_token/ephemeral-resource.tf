terraform {
  required_version = ">= 1.10.0"
  required_providers {
    redisstreamcoordinator = {
      source = "ghkdqhrbals/redisstreamcoordinator"
    }
  }
}

variable "coordinator_endpoint" {
  type = string
}

variable "ci_username" {
  type = string
}

variable "ci_password" {
  type      = string
  sensitive = true
  ephemeral = true
}

# Credentials come from variables rather than REDIS_STREAM_COORDINATOR_*:
# the environment applies to every provider instance, and a password from it
# would conflict with the token below.
provider "redisstreamcoordinator" {
  endpoint = var.coordinator_endpoint
  username = var.ci_username
  password = var.ci_password
}

# Exchanges the provider's own credentials for a Bearer token once per run.
# Set username and password here to log in as another principal instead.
# The token is never written to the plan or the state.
ephemeral "redisstreamcoordinator_token" "ci" {}

# A provider instance (for example one handed to a module) that only ever
# sees the token, never the password.
provider "redisstreamcoordinator" {
  alias    = "bearer"
  endpoint = var.coordinator_endpoint
  token    = ephemeral.redisstreamcoordinator_token.ci.token
}

data "redisstreamcoordinator_health" "via_token" {
  provider = redisstreamcoordinator.bearer
}
