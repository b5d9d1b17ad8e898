data "redisstreamcoordinator_health" "this" {}

# Test status only: redis may read UNKNOWN on the first call.
output "coordinator_up" {
  value = data.redisstreamcoordinator_health.this.status == "UP"
}
