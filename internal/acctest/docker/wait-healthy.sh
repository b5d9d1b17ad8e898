#!/usr/bin/env bash
# Waits until the coordinator at TF_ACC_COORDINATOR_ENDPOINT reports
# "status":"UP" on /coord/v1/monitoring/health, asked as the READ principal.
# Usage: wait-healthy.sh [timeout seconds, default 120]
set -euo pipefail
timeout="${1:-120}"
url="${TF_ACC_COORDINATOR_ENDPOINT:?source env.sh first}/coord/v1/monitoring/health"
user="${TF_ACC_COORDINATOR_READ_USERNAME:?source env.sh first}:${TF_ACC_COORDINATOR_READ_PASSWORD:?}"
deadline=$((SECONDS + timeout))
echo "==> waiting up to ${timeout}s for $url to report UP"
while :; do
  body="$(curl -fsS --max-time 5 -u "$user" "$url" 2>/dev/null || true)"
  if [[ "$body" =~ \"status\"[[:space:]]*:[[:space:]]*\"UP\" ]]; then
    echo "==> coordinator is UP: $body"
    exit 0
  fi
  if ((SECONDS >= deadline)); then
    echo "error: the coordinator did not report UP within ${timeout}s; last answer: ${body:-none}" >&2
    exit 1
  fi
  sleep 2
done
