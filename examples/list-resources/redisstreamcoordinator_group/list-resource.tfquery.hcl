# Every consumer group (Terraform 1.14 or later; `terraform query`). `limit`
# (100 unless set) must exceed the number of groups.
list "redisstreamcoordinator_group" "all" {
  provider = redisstreamcoordinator
  limit    = 1000

  # Optional: only the groups of one stream prefix (exact match).
  # config {
  #   stream_prefix = "orders"
  # }
}
