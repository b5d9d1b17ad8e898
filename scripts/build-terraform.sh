#!/usr/bin/env bash
# Builds a pinned Terraform release from its source module on the Go module
# proxy into OUT (the git-ignored .tools/ folder): no release archive is
# downloaded. `go install github.com/hashicorp/terraform@VERSION` refuses the
# module (its go.mod has replace directives), and the module zip lacks the
# nested modules of the remote-state backends (azure, consul, cos, gcs,
# kubernetes, oci, oss, pg, s3) and internal/legacy. So the module is copied
# to a temporary folder, those backends are dropped from
# internal/backend/init/init.go and their require/replace lines from go.mod
# (the tests use the local backend), and ./ is built with
# -X .../version.dev=no so that it reports the release version. A cold build
# took 6.3 minutes on 2 idle cores (28 beside a busy test run); with a warm Go build cache
# 12 seconds. The binary is written under a temporary name and moved into
# place, so an interrupted build is never mistaken for a finished one.
#
# usage: scripts/build-terraform.sh VERSION OUT
set -euo pipefail
version="$1"
out="$2"
start=$(date +%s)
echo "==> Terraform ${version}: building from the Go module proxy into ${out} (cold: 6 min on 2 idle cores, up to 30 beside a busy test run; warm Go build cache: under a minute)"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
# Outside any module, so the provider's go.mod is neither read nor changed.
dir=$(cd "$tmp" && go mod download -json "github.com/hashicorp/terraform@${version}" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
if [[ -z "$dir" || ! -f "$dir/go.mod" ]]; then
  echo "error: go mod download github.com/hashicorp/terraform@${version} gave no module directory" >&2
  exit 1
fi
src="$tmp/terraform"
cp -R "$dir" "$src"
chmod -R u+w "$src"
dropped='azure|consul|cos|gcs|kubernetes|oci|oss|pg|s3'
init="$src/internal/backend/init/init.go"
# The imports of the dropped backends, and their entries in the backends map.
sed -i -E \
  -e "/^[[:space:]]*backend(Azure|Consul|Cos|GCS|Kubernetes|OCI|OSS|Pg|S3) \"/d" \
  -e "/^[[:space:]]*\"(azurerm|consul|cos|gcs|kubernetes|oss|pg|s3|oci)\":[[:space:]]/d" \
  "$init"
if grep -Eq "remote-state/(${dropped})\"" "$init"; then
  echo "error: could not drop the remote-state backends from $init; the build script needs updating for ${version}" >&2
  exit 1
fi
# Their require and replace lines, and internal/legacy's.
sed -i -E \
  -e "\#^[[:space:]]*github.com/hashicorp/terraform/internal/(backend/remote-state/(${dropped})|legacy) v#d" \
  -e "\#^replace github.com/hashicorp/terraform/internal/(backend/remote-state/(${dropped})|legacy) =>#d" \
  "$src/go.mod"
mkdir -p "$(dirname "$out")"
(cd "$src" && GOFLAGS=-mod=mod GOWORK=off go build -trimpath \
  -ldflags "-s -w -X github.com/hashicorp/terraform/version.dev=no" -o "$out.tmp" .)
mv "$out.tmp" "$out"
echo "==> Terraform ${version}: built $(TF_CLI_CONFIG_FILE=/dev/null "$out" version | head -n1) in $(( $(date +%s) - start ))s"
