#!/usr/bin/env bash
# Builds a pinned OpenTofu release from its source module on the Go module
# proxy into OUT (the git-ignored .tools/ folder): nothing else is downloaded.
# `go install github.com/opentofu/opentofu/cmd/tofu@VERSION` refuses the module
# because its go.mod has a replace directive, so the module is downloaded and
# ./cmd/tofu is built from inside it (the module cache is read-only: the binary
# goes to OUT). A cold build took 11.5 minutes (9.7 CPU-minutes) on 2 cores; with a warm Go
# build cache under a minute. The binary is written under a temporary name and moved
# into place, so an interrupted build is never mistaken for a finished one.
#
# usage: scripts/build-tofu.sh VERSION OUT
set -euo pipefail
version="$1"
out="$2"
start=$(date +%s)
echo "==> OpenTofu ${version}: building from the Go module proxy into ${out} (cold: ~12 min on 2 cores, warm Go build cache: ~1 min)"
# Outside any module, so the provider's go.mod is neither read nor changed.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=$(cd "$tmp" && go mod download -json "github.com/opentofu/opentofu@${version}" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
if [[ -z "$dir" || ! -f "$dir/go.mod" ]]; then
  echo "error: go mod download github.com/opentofu/opentofu@${version} gave no module directory" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
# version.dev=no: report the release version, as OpenTofu's release builds do,
# not ${version}-dev.
(cd "$dir" && GOFLAGS= go build -trimpath \
  -ldflags "-s -w -X github.com/opentofu/opentofu/version.dev=no" -o "$out.tmp" ./cmd/tofu)
mv "$out.tmp" "$out"
echo "==> OpenTofu ${version}: built $(TF_CLI_CONFIG_FILE=/dev/null "$out" version | head -n1) in $(( $(date +%s) - start ))s"
