# Renders the Redis Stream Coordinator part of a saved plan as Markdown for a
# pull-request comment:
#
#   terraform show -json tfplan > plan.json
#   jq -r -f preview.jq plan.json > comment.md
#
# It reads only planned values (the `resharding` preview of every shard count
# change, and the groups a plan replaces or deletes), never a warning: the
# plan file keeps no diagnostics. It prints no credentials, but plan.json
# holds every planned value in clear text: do not publish plan.json itself.

def addr: .address;
def actions: .change.actions | join(",");
def verb:
  if .change.actions == ["create"] then "create"
  elif .change.actions == ["update"] then "update"
  elif (.change.actions | sort) == ["create", "delete"] then "replace"
  elif .change.actions == ["delete"] then "delete"
  else actions end;
def pct: if . == null then "unknown until apply" else "\(.)%" end;
def ornull(s): if . == null then s else tostring end;

def groups_list:
  if . == null then "unknown until apply"
  else to_entries | sort_by(.key) | map("`\(.key)` (\(.value))") | join(", ") end;

# One shard count change with its resharding preview.
def shard_count_change:
  .change.after as $a
  | (.change.after_unknown // {}) as $u
  | if $u.resharding == true then
      "- **\(addr)** (\(verb)): stream `\($a.stream_prefix)` → \($a.shard_count | ornull("unknown")) shards; "
      + "the resharding preview is known only after apply"
      + (if .change.before == null or verb == "replace"
         then " (a new resource: the apply scales from the counts it finds then; a change read at plan time is in "
              + "the plan job's log, as a warning)"
         else "" end)
    elif $a.resharding == null and .change.before != null and .change.before.shard_count != $a.shard_count then
      "- **\(addr)** (\(verb)): stream `\($a.stream_prefix)` **\(.change.before.shard_count) → \($a.shard_count) shards**, "
      + "but the plan carries **no resharding preview** (a provider version without it?): review the impact by hand"
    elif $a.resharding == null then
      "- **\(addr)** (\(verb)): stream `\($a.stream_prefix)`, \($a.shard_count) shards: no resharding "
      + "(nothing changes on the coordinator)"
    else
      $a.resharding as $r
      | "- **\(addr)** (\(verb)): stream `\($a.stream_prefix)` **\($r.from_shard_count // .change.before.shard_count | ornull("?")) → \($r.to_shard_count // $a.shard_count | ornull("?")) shards**\n"
        + "  - moved partition keys: \($r.moved_key_percent | pct)\n"
        + "  - rescaled groups (current shard count): \($r.affected_groups | groups_list)\n"
        + "  - completes by itself: "
        + (if $r.completes_by_itself == true then "yes"
           elif $r.completes_by_itself == false then "**no**: \($r.blocked_by // "reason unknown")"
           else "known after apply (it depends on consumers or migrations of groups that can change before the apply; the plan's warning has them as read at plan time)" end) + "\n"
        + "  - based on: metadataVersion \($r.basis_metadata_version | ornull("unknown")) (\($r.plan_check // "no plan check recorded"))"
    end;

# A group the plan deletes, or deletes and creates again (a re-creation).
def group_removal:
  .change.before as $b
  | .change.after as $a
  | "- **\(addr)** (\(verb)): `\($b.stream_prefix)/\($b.consumer_group)`"
    + (if $a != null then " → `\($a.stream_prefix)/\($a.consumer_group)`" else "" end)
    + (if (.change.replace_paths // []) | length > 0
       then "; forced by " + ([.change.replace_paths[] | map(tostring) | join(".") | "`\(.)`"] | join(", "))
       else "" end)
    + "; deletion_policy \($b.deletion_policy // "ABANDON"): "
    + (if $b.deletion_policy == "DELETE" then "the old group's metadata is **deleted** on the coordinator"
       else "the old group stays on the coordinator (only Terraform forgets it)" end);

[.resource_changes[]? | select(.mode == "managed" and (.type | startswith("redisstreamcoordinator_")))] as $rc
| [$rc[] | select(.type == "redisstreamcoordinator_group_shard_count" and .change.actions != ["no-op"] and .change.actions != ["read"] and .change.actions != ["delete"])] as $scales
| [$rc[] | select(.type == "redisstreamcoordinator_group" and any(.change.actions[]; . == "delete"))] as $removals
| [$rc[] | select(.type == "redisstreamcoordinator_group" and .change.actions == ["create"])] as $creates
| "### Redis Stream Coordinator: plan preview\n\n"
  + "Terraform \(.terraform_version), read from the saved plan. \($scales | length) shard count change(s), "
  + "\($creates | length) group(s) created, \($removals | length) group(s) deleted or re-created.\n"
  + (if ($scales | length) > 0 then
       "\n#### Shard count changes\n\n" + ([$scales[] | shard_count_change] | join("\n")) + "\n"
     else "" end)
  + (if ($creates | length) > 0 then
       "\n#### Groups created\n\n"
       + ([$creates[] | .change.after as $a
           | "- **\(addr)**: `\($a.stream_prefix)/\($a.consumer_group)`, \($a.initial_shard_count | ornull("unknown until apply")) shards"]
          | join("\n")) + "\n"
     else "" end)
  + (if ($removals | length) > 0 then
       "\n#### Groups deleted or re-created\n\n" + ([$removals[] | group_removal] | join("\n")) + "\n"
     else "" end)
