# After: the same map drives the imports and the resources.
terraform {
  required_version = ">= 1.11"

  required_providers {
    redisstreamcoordinator = {
      source  = "ghkdqhrbals/redisstreamcoordinator"
      version = "~> 0.1.0"
    }
  }
}

provider "redisstreamcoordinator" {
  endpoint = "https://stream-coordinator.internal:8080"
  username = "terraform-ci"
}

variable "stream_groups" {
  description = "Every group the module managed, unchanged (its shard_count is not used: the module scaled only at create)."
  type = map(object({
    stream_prefix  = string
    consumer_group = string
    shard_count    = number
  }))
}

# The shard counts as the coordinator holds them now.
data "redisstreamcoordinator_groups" "all" {}

locals {
  current_shard_count = { for g in data.redisstreamcoordinator_groups.all.groups : g.id => g.shard_count }

  # One shard count resource per prefix, held by its first group in key order.
  shard_count_groups = {
    for prefix in distinct([for g in values(var.stream_groups) : g.stream_prefix]) :
    prefix => [for g in values(var.stream_groups) : g if g.stream_prefix == prefix][0]
  }
}

# 1. Forget every instance of the module call without destroying anything.
removed {
  from = module.stream_group

  lifecycle {
    destroy = false
  }
}

# 2. Adopt the groups and one shard count per prefix.
import {
  for_each = var.stream_groups
  to       = redisstreamcoordinator_group.managed[each.key]
  id       = "${each.value.stream_prefix}/${each.value.consumer_group}"
}

import {
  for_each = local.shard_count_groups
  to       = redisstreamcoordinator_group_shard_count.managed[each.key]
  id       = "${each.value.stream_prefix}/${each.value.consumer_group}"
}

# 3. Describe them with the module's names and the coordinator's counts.
resource "redisstreamcoordinator_group" "managed" {
  for_each = var.stream_groups

  stream_prefix       = each.value.stream_prefix
  consumer_group      = each.value.consumer_group
  initial_shard_count = local.current_shard_count["${each.value.stream_prefix}/${each.value.consumer_group}"]
}

resource "redisstreamcoordinator_group_shard_count" "managed" {
  for_each = local.shard_count_groups

  stream_prefix  = each.key
  consumer_group = each.value.consumer_group
  shard_count    = local.current_shard_count["${each.key}/${each.value.consumer_group}"]
}
