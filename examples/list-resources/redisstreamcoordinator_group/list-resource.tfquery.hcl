# Every consumer group on the coordinator (Terraform 1.14 or later; run
# `terraform query`). Terraform returns at most `limit` results per list block,
# 100 unless set: set it above the number of groups you expect.
list "redisstreamcoordinator_group" "all" {
  provider = redisstreamcoordinator
  limit    = 1000

  # Optional: only the groups of one stream prefix (exact match).
  # config {
  #   stream_prefix = "orders"
  # }
}
