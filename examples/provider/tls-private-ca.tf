terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

# A coordinator behind a private certificate authority.
variable "coordinator_ca_pem" {
  type        = string
  description = "PEM-encoded CA certificate of the coordinator's TLS endpoint"
}

provider "redisstreamcoordinator" {
  endpoint    = "https://stream-coordinator.internal:8443"
  username    = "terraform-ci"
  ca_cert_pem = var.coordinator_ca_pem

  max_retries     = 10
  retry_wait_min  = "1s"
  retry_wait_max  = "30s"
  request_timeout = "30s"
}
