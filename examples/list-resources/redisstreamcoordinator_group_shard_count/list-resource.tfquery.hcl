# The shard count of every stream prefix on the coordinator: one result per
# prefix, for its first consumer group by name (a scale rescales every group of
# the prefix, so one resource manages the count of them all). Terraform 1.14
# or later; run `terraform query`.
list "redisstreamcoordinator_group_shard_count" "all" {
  provider = redisstreamcoordinator
  limit    = 1000
}
