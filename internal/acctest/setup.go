package acctest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// OpenTofuRegistryHost is the registry OpenTofu resolves a provider source
// without a hostname against (Terraform's is registry.terraform.io).
const OpenTofuRegistryHost = "registry.opentofu.org"

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
	if err := os.Setenv("TF_ACC_TERRAFORM_PATH", tf); err != nil {
		return err
	}
	// terraform-plugin-testing registers the in-process provider as
	// <TF_ACC_PROVIDER_HOST>/<namespace>/<type>; the tests' configurations
	// name it without a host, which OpenTofu resolves against its own
	// registry, so the two must agree or OpenTofu tries to install it.
	tofu, err := IsOpenTofu(tf)
	if err != nil {
		return err
	}
	if tofu && os.Getenv("TF_ACC_PROVIDER_HOST") == "" {
		return os.Setenv("TF_ACC_PROVIDER_HOST", OpenTofuRegistryHost)
	}
	return nil
}

var flavors sync.Map // binary path -> bool (OpenTofu)

// IsOpenTofu reports whether the binary at path is OpenTofu rather than
// Terraform, from the line of its `version` output that names it
// ("OpenTofu v1.12.6" against "Terraform v1.11.4"). The answer is cached per path.
func IsOpenTofu(path string) (bool, error) {
	if v, ok := flavors.Load(path); ok {
		tofu, _ := v.(bool)
		return tofu, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "version")
	// A missing CLI configuration named by the environment makes both print
	// a warning before the version line.
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+os.DevNull, "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		return false, fmt.Errorf("%s version: %w", path, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		var tofu bool
		switch {
		case strings.HasPrefix(line, "OpenTofu v"):
			tofu = true
		case strings.HasPrefix(line, "Terraform v"):
		default:
			continue
		}
		flavors.Store(path, tofu)
		return tofu, nil
	}
	return false, fmt.Errorf("%s version printed %q: neither Terraform nor OpenTofu", path, out)
}

// UnderOpenTofu reports whether the acceptance tests run OpenTofu (the
// binary FindTerraform finds). Tests of features that behave differently
// there branch on it and say how.
func UnderOpenTofu(t interface {
	Helper()
	Fatal(...any)
}) bool {
	t.Helper()
	bin, err := FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	tofu, err := IsOpenTofu(bin)
	if err != nil {
		t.Fatal(err)
	}
	return tofu
}

// FindTerraform locates the terraform binary: TF_ACC_TERRAFORM_PATH (which
// may name an OpenTofu binary: `make test` runs the suite under both), else
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
