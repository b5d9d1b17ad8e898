# Adopt every group of some stream prefixes, changing nothing.
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

variable "stream_prefixes" {
  description = "Stream prefixes whose groups to adopt."
  type        = set(string)
}

# 1. Discover: one listing per prefix.
data "redisstreamcoordinator_groups" "adopted" {
  for_each      = var.stream_prefixes
  stream_prefix = each.value
}

locals {
  # Every group, keyed by its import id "{stream_prefix}/{consumer_group}".
  groups = merge([
    for prefix, listing in data.redisstreamcoordinator_groups.adopted : {
      for g in listing.groups : "${g.stream_prefix}/${g.consumer_group}" => g
    }
  ]...)

  # One shard count resource per prefix, held by its first group by name.
  shard_counts = {
    for prefix, listing in data.redisstreamcoordinator_groups.adopted :
    prefix => listing.groups[0] if length(listing.groups) > 0
  }
}

# 2. Import every group and every prefix's shard count.
import {
  for_each = local.groups
  to       = redisstreamcoordinator_group.adopted[each.key]
  id       = each.key
}

import {
  for_each = local.shard_counts
  to       = redisstreamcoordinator_group_shard_count.adopted[each.key]
  id       = "${each.value.stream_prefix}/${each.value.consumer_group}"
}

# 3. Describe them as they are.
resource "redisstreamcoordinator_group" "adopted" {
  for_each = local.groups

  stream_prefix       = each.value.stream_prefix
  consumer_group      = each.value.consumer_group
  initial_shard_count = each.value.shard_count
}

resource "redisstreamcoordinator_group_shard_count" "adopted" {
  for_each = local.shard_counts

  stream_prefix  = each.key
  consumer_group = each.value.consumer_group
  # Adopted as it is; to manage it, use your own values (e.g.
  # var.shard_counts[each.key], filled from adopted_shard_counts).
  shard_count = each.value.shard_count
}

output "adopted_shard_counts" {
  description = "Each adopted prefix's shard count."
  value       = { for prefix, g in local.shard_counts : prefix => g.shard_count }
}
