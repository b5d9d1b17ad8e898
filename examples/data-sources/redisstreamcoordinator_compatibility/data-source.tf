terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

data "redisstreamcoordinator_compatibility" "this" {}

locals {
  # Coordination protocol version of the consumer library about to be deployed.
  consumer_protocol_version = 1
  supported                 = data.redisstreamcoordinator_compatibility.this.supported_coordination_versions
}

check "consumer_protocol_supported" {
  assert {
    condition     = local.consumer_protocol_version >= local.supported.min && local.consumer_protocol_version <= local.supported.max
    error_message = "The coordinator supports protocol versions ${local.supported.min}..${local.supported.max}, not ${local.consumer_protocol_version}."
  }
}
