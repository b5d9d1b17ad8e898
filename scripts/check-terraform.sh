#!/usr/bin/env bash
# Acceptance tests drive a real terraform binary. Never download one: find it
# or fail with instructions (a silent skip would hide every acceptance test).
set -euo pipefail
tf="${TF_ACC_TERRAFORM_PATH:-$(command -v terraform || true)}"
if [[ -z "$tf" || ! -x "$tf" ]]; then
  cat >&2 <<'MSG'
error: terraform not found.
  The acceptance tests need Terraform >= 1.11 on PATH, or TF_ACC_TERRAFORM_PATH
  set to its binary. Install it from your OS packages (e.g. HashiCorp's apt
  repository: apt-get install terraform) and run the command again.
  Tests never download Terraform.
MSG
  exit 1
fi
echo "==> using $("$tf" version | head -n1) at $tf"
