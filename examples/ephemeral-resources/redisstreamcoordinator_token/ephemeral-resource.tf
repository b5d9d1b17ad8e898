terraform {
  required_version = ">= 1.11"
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

# Credentials come from variables here; REDIS_STREAM_COORDINATOR_USERNAME and
# _PASSWORD would do as well. Credentials written in a provider block win as a
# set: the aliased instance below sets token, so it ignores a username and
# password from the environment and never sees the password.
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
