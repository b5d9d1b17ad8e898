terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

data "redisstreamcoordinator_health" "this" {}

# Test status only: redis may read UNKNOWN on the first call.
output "coordinator_up" {
  value = data.redisstreamcoordinator_health.this.status == "UP"
}
