# Publishes a release's files to an HCP Terraform or Terraform Enterprise private registry with the
# tfe provider. Argument names follow the tfe provider's documentation at the time of writing.
locals {
  org     = "example-org"
  version = "0.1.0"
  dist    = "${path.module}/dist" # the release files, as downloaded from the GitHub release
  prefix  = "terraform-provider-redisstreamcoordinator_${local.version}"
}

resource "tfe_registry_gpg_key" "release" {
  organization = local.org
  ascii_armor  = file("${path.module}/release-key.asc") # the public half of GPG_PRIVATE_KEY
}

resource "tfe_registry_provider" "redisstreamcoordinator" {
  organization  = local.org
  registry_name = "private"
  namespace     = local.org
  name          = "redisstreamcoordinator"
}

resource "tfe_registry_provider_version" "release" {
  organization         = local.org
  name                 = tfe_registry_provider.redisstreamcoordinator.name
  version              = local.version
  key_id               = tfe_registry_gpg_key.release.id
  protocols            = ["6.0"]
  shasums_filename     = "${local.dist}/${local.prefix}_SHA256SUMS"
  shasums_sig_filename = "${local.dist}/${local.prefix}_SHA256SUMS.sig"
}

resource "tfe_registry_provider_version_platform" "release" {
  for_each = toset(["linux_amd64", "linux_arm64", "darwin_arm64"])

  organization = local.org
  name         = tfe_registry_provider.redisstreamcoordinator.name
  version      = tfe_registry_provider_version.release.version
  os_arch      = each.key
  filename     = "${local.dist}/${local.prefix}_${each.key}.zip"
}
