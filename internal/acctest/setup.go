package acctest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// PrepareTerraform makes the process environment safe for terraform-plugin-
// testing and for tests that run terraform themselves, whether tests run
// through `make test` or a bare `go test`: Terraform never phones home, runs
// in automation mode, never reads a missing or personal CLI configuration,
// and is never downloaded. With TF_ACC set and no terraform to be found it
// returns an error, so acceptance tests fail loudly instead of being skipped.
// Call it from TestMain.
func PrepareTerraform() error {
	ClearProviderEnv()
	_ = os.Setenv("CHECKPOINT_DISABLE", "1")
	_ = os.Setenv("TF_IN_AUTOMATION", "1")
	_ = os.Setenv("TF_ACC_PROVIDER_NAMESPACE", ProviderNamespace)
	// Always an empty CLI configuration: a developer's own one may hold dev
	// overrides or credentials. The null device leaves no file behind.
	_ = os.Setenv("TF_CLI_CONFIG_FILE", os.DevNull)
	if os.Getenv("TF_ACC") == "" {
		return nil
	}
	tf, err := FindTerraform()
	if err != nil {
		return err
	}
	return os.Setenv("TF_ACC_TERRAFORM_PATH", tf)
}

// FindTerraform locates the terraform binary: TF_ACC_TERRAFORM_PATH, else
// terraform on PATH. It never downloads one: without it, it says how to get
// it.
func FindTerraform() (string, error) {
	if tf := os.Getenv("TF_ACC_TERRAFORM_PATH"); tf != "" {
		if !fileExists(tf) {
			return "", fmt.Errorf("TF_ACC_TERRAFORM_PATH=%s does not exist", tf)
		}
		return tf, nil
	}
	tf, err := exec.LookPath("terraform")
	if err != nil {
		return "", errors.New("terraform not found on PATH (nor TF_ACC_TERRAFORM_PATH): install Terraform >= 1.11 from your OS packages; it is never downloaded")
	}
	return tf, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
