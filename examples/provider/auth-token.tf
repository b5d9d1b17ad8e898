terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1"
    }
  }
}

# A pre-issued Bearer token (from POST /coord/v1/auth/login) instead of a
# password. Tokens live 7 days by default, carry the roles they were issued
# with, and cannot be revoked short of rotating the coordinator's token secret:
# prefer short-lived credentials, or the redisstreamcoordinator_token
# ephemeral resource, which never stores the token.
variable "coordinator_token" {
  type      = string
  sensitive = true
}

provider "redisstreamcoordinator" {
  endpoint = "https://stream-coordinator.internal:8080"
  token    = var.coordinator_token
}
