terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

# A pre-issued Bearer token instead of a password.
variable "coordinator_token" {
  type      = string
  sensitive = true
}

provider "redisstreamcoordinator" {
  endpoint = "https://stream-coordinator.internal:8080"
  token    = var.coordinator_token
}
