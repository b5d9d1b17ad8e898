#!/usr/bin/env bash
# Generates docs/ with tfplugindocs from templates/, examples/ and the
# provider's schema, or checks that docs/ is up to date.
#
#   scripts/docs.sh generate   regenerate docs/
#   scripts/docs.sh check      regenerate, fail if docs/ changed, validate
#
# Nothing is ever downloaded. Left to itself, tfplugindocs looks for terraform
# on PATH and, failing that, downloads the latest release (it has no flag to
# name a local binary; --tf-version always downloads). So this script exports
# the schema itself with the local terraform and hands it to tfplugindocs with
# --providers-schema, which makes tfplugindocs skip both its own provider
# build and Terraform entirely.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-generate}"
tfplugindocs="${TFPLUGINDOCS:?set TFPLUGINDOCS to the tfplugindocs binary (make docs does)}"
provider_name=redisstreamcoordinator

work="$(mktemp -d -t tfplugindocs-XXXXXX)"
trap 'rm -rf "$work"' EXIT
: >"$work/empty.tfrc"
export CHECKPOINT_DISABLE=1 TF_CLI_CONFIG_FILE="$work/empty.tfrc" TF_IN_AUTOMATION=1
unset TF_CLI_ARGS TF_CLI_ARGS_init TF_DATA_DIR TF_PLUGIN_CACHE_DIR

scripts/check-terraform.sh >/dev/null
# The newest Terraform (make docs passes TF_DOCS_TERRAFORM): list resources
# and actions appear in the exported schema only from Terraform 1.14 on.
tf="${TF_DOCS_TERRAFORM:-${TF_ACC_TERRAFORM_PATH:-$(command -v terraform)}}"

# Export the schema: the provider is built into a local plugin directory that
# terraform init reads instead of any registry (-plugin-dir), under the
# address tfplugindocs looks the schema up by.
plugin_dir="$work/plugins/registry.terraform.io/hashicorp/$provider_name/0.0.1/$(go env GOOS)_$(go env GOARCH)"
mkdir -p "$plugin_dir" "$work/config"
go build -o "$plugin_dir/terraform-provider-$provider_name" .
printf 'provider "%s" {}\n' "$provider_name" >"$work/config/provider.tf"
(
  cd "$work/config"
  "$tf" init -input=false -backend=false -plugin-dir="$work/plugins" >/dev/null
  "$tf" providers schema -json >"$work/schema.json"
)

"$tfplugindocs" generate \
  --provider-name "$provider_name" \
  --rendered-provider-name "Redis Stream Coordinator" \
  --providers-schema "$work/schema.json"

if [[ "$mode" == check ]]; then
  untracked="$(git ls-files --others --exclude-standard -- docs)"
  if ! git diff --quiet -- docs || [[ -n "$untracked" ]]; then
    git --no-pager diff --stat -- docs
    [[ -z "$untracked" ]] || printf 'untracked:\n%s\n' "$untracked"
    echo "error: docs/ is stale: run 'make docs' and commit the result" >&2
    exit 1
  fi
  # validate logs every file it looks at as [DEBUG]; keep its verdict.
  "$tfplugindocs" validate --provider-name "$provider_name" --providers-schema "$work/schema.json" 2>&1 | grep -v '\[DEBUG\]'
  echo "==> docs/ is up to date and valid"
fi
