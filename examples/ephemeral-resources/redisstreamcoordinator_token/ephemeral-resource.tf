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

# Or REDIS_STREAM_COORDINATOR_USERNAME and _PASSWORD.
provider "redisstreamcoordinator" {
  endpoint = var.coordinator_endpoint
  username = var.ci_username
  password = var.ci_password
}

# The provider's own credentials, exchanged once per run; never in plan or
# state. Set username and password to log in as another principal.
ephemeral "redisstreamcoordinator_token" "ci" {}

# For example one handed to a module: it sees only the token.
provider "redisstreamcoordinator" {
  alias    = "bearer"
  endpoint = var.coordinator_endpoint
  token    = ephemeral.redisstreamcoordinator_token.ci.token
}

data "redisstreamcoordinator_health" "via_token" {
  provider = redisstreamcoordinator.bearer
}
