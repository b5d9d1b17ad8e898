#!/usr/bin/env bash
# The release build of .goreleaser.yml without a tag, a GPG key or a
# publication: goreleaser --snapshot --skip=sign, at version SNAPSHOT_VERSION
# (make passes the top of CHANGELOG.md), into dist/.
#
#   GORELEASER=<binary> SNAPSHOT_VERSION=0.1.0 scripts/release-snapshot.sh [single-target]
#
# With "single-target", only GOOS/GOARCH (default: this machine's) is built:
# goreleaser release has no --single-target, so a copy of the configuration
# gets a `targets` list, which overrides the build's goos/goarch matrix.
# Everything else (archives, checksums, the manifest) is the repository's.
set -euo pipefail
cd "$(dirname "$0")/.."

goreleaser="${GORELEASER:?set GORELEASER to the goreleaser binary (make release-snapshot does)}"
export SNAPSHOT_VERSION="${SNAPSHOT_VERSION:?set SNAPSHOT_VERSION}"
config=.goreleaser.yml

if [[ "${1:-}" == single-target ]]; then
  os="${GOOS:-$(go env GOOS)}" arch="${GOARCH:-$(go env GOARCH)}"
  target="${os}_${arch}"
  [[ "$arch" == amd64 ]] && target+="_v1"
  work="$(mktemp -d -t release-snapshot-XXXXXX)"
  trap 'rm -rf "$work"' EXIT
  config="$work/goreleaser.yml"
  # The copy also drops the `before:` hooks (go mod download of the whole
  # module graph): the one build needs only the modules the provider builds
  # with, so it runs offline from a module cache that has built the provider.
  awk -v target="$target" '
    /^before:/ { skip = 1; next }
    skip && /^[^ #]/ { skip = 0 }
    skip { next }
    { print }
    /^    binary: / { print "    targets: [\"" target "\"]" }
  ' .goreleaser.yml >"$config"
  ! grep -q "go mod download" "$config" || { echo "error: could not drop the before hooks from a copy of .goreleaser.yml" >&2; exit 1; }
  grep -q "targets: \[\"$target\"\]" "$config" || { echo "error: could not set the target in a copy of .goreleaser.yml" >&2; exit 1; }
  echo "==> release snapshot $SNAPSHOT_VERSION for $target only"
else
  echo "==> release snapshot $SNAPSHOT_VERSION for every platform of .goreleaser.yml"
fi

nice -n 10 "$goreleaser" release --snapshot --skip=sign --clean --config "$config"
ls dist/*.zip dist/*_SHA256SUMS
