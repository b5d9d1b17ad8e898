# Sourced by `make testacc-docker` (before `docker compose up`, which reads
# these too): where compose.yaml's coordinator listens and the principals it
# is configured with, in the variables the acceptance-test harness reads
# (internal/acctest/harness.go).
# The image's tag: the release the provider is tested against, unless the
# caller chose one (CI's scheduled job: COORDINATOR_IMAGE_TAG=latest).
export COORDINATOR_IMAGE_TAG="${COORDINATOR_IMAGE_TAG:-0.1.0}"
export TF_ACC_COORDINATOR_ENDPOINT="http://127.0.0.1:18080"
export TF_ACC_COORDINATOR_WRITE_USERNAME="tfacc-writer"
export TF_ACC_COORDINATOR_WRITE_PASSWORD="tfacc-writer-pass"
export TF_ACC_COORDINATOR_READ_USERNAME="tfacc-reader"
export TF_ACC_COORDINATOR_READ_PASSWORD="tfacc-reader-pass"
export TF_ACC_COORDINATOR_MEMBER_USERNAME="tfacc-member"
export TF_ACC_COORDINATOR_MEMBER_PASSWORD="tfacc-member-pass"
