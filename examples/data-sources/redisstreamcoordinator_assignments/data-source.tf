terraform {
  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

# Fails the plan when the coordinator reports a broken assignment invariant.
data "redisstreamcoordinator_assignments" "orders" {
  stream_prefix  = "orders"
  consumer_group = "order-service"

  lifecycle {
    postcondition {
      condition     = length(self.invariant_violations) == 0
      error_message = "Group order-service of orders violates assignment invariants: ${join("; ", self.invariant_violations)}"
    }
  }
}

# Members still handing shards over after a rebalance.
output "orders_revoking_members" {
  value = keys(data.redisstreamcoordinator_assignments.orders.revoke_progress)
}
