# One result per stream prefix, through its first group by name (Terraform
# 1.14 or later; `terraform query`).
list "redisstreamcoordinator_group_shard_count" "all" {
  provider = redisstreamcoordinator
  limit    = 1000
}
