# Partial configuration: terraform init -backend-config=backend.tfbackend.
terraform {
  backend "s3" {}
}
