#!/usr/bin/env bash
# Runs the acceptance tests the way a user runs them against a real
# coordinator: through the TF_ACC_COORDINATOR_* variables, against one
# coordinator process that the tests did not start and have no hooks into.
# That coordinator is the in-repo one started on its own with
#   --alternative-numbering    versions, epochs, shard assignment and listing
#                              order unlike the real server, within the
#                              contract (coordinator.AlternativeNumbering), so
#                              a test that asserts an incidental number fails;
#   --authenticate-member-api  heartbeats need the MEMBER principal;
#   the real server's timing   1 s loop tick, 3 s heartbeats, 15 s leases;
# and WRITE, READ and MEMBER users. Tests that need the in-repo
# coordinator's fault hooks skip and say why.
#
# usage: scripts/testacc-standalone.sh [go test flags...]   (needs TF_ACC=1)
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d -t coordinator-XXXXXX)"
pid=""
cleanup() {
  if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/coordinator" ./internal/coordinator/cmd/coordinator
writer=tfacc-writer:writer-pass reader=tfacc-reader:reader-pass member=tfacc-member:member-pass
"$work/coordinator" --addr 127.0.0.1:0 --alternative-numbering --authenticate-member-api \
  --user "$writer:WRITE" --user "$reader:READ" --user "$member:MEMBER" >"$work/out" 2>&1 &
pid=$!

# The coordinator prints its URL once it listens on a free port, or exits
# with an error. It is waited for as long as it runs: a busy machine only
# makes this slower. The bound only ends a coordinator that hangs.
url=""
for _ in $(seq 1 1200); do
  url="$(sed -n 's/^coordinator listening on \(http:[^ ]*\)$/\1/p' "$work/out")"
  [[ -n "$url" ]] && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/out" >&2; echo "error: the coordinator exited before listening" >&2; exit 1; }
  sleep 0.1
done
if [[ -z "$url" ]]; then
  cat "$work/out" >&2
  echo "error: the coordinator runs but reported no address within 2 minutes" >&2
  exit 1
fi
echo "==> coordinator (alternative numbering, authenticated heartbeats) at $url"

export TF_ACC_COORDINATOR_ENDPOINT="$url"
export TF_ACC_COORDINATOR_WRITE_USERNAME="${writer%%:*}" TF_ACC_COORDINATOR_WRITE_PASSWORD="${writer#*:}"
export TF_ACC_COORDINATOR_READ_USERNAME="${reader%%:*}" TF_ACC_COORDINATOR_READ_PASSWORD="${reader#*:}"
export TF_ACC_COORDINATOR_MEMBER_USERNAME="${member%%:*}" TF_ACC_COORDINATOR_MEMBER_PASSWORD="${member#*:}"
go test "$@" ./internal/provider/
