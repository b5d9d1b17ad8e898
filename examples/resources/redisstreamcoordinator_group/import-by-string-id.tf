# The import id is {stream_prefix}/{consumer_group}. Run
# `terraform plan -generate-config-out=generated.tf` to have Terraform write
# the matching resource block.
import {
  to = redisstreamcoordinator_group.orders
  id = "orders/order-service"
}
