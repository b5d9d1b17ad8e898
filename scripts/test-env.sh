# Sourced by `make test` / `make testacc`: the environment every acceptance
# test runs in. Terraform is never downloaded, never phones home, and never
# reads the developer's own CLI configuration.
tf="${TF_ACC_TERRAFORM_PATH:-$(command -v terraform)}"
export TF_ACC_TERRAFORM_PATH="$tf"
export CHECKPOINT_DISABLE=1
export TF_IN_AUTOMATION=1
cli_config="$(mktemp -t tfacc-cli-XXXXXX.tfrc)"
export TF_CLI_CONFIG_FILE="$cli_config"
