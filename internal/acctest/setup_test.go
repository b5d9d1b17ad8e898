package acctest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindTerraformPrefersTFAccTerraformPath(t *testing.T) {
	tf := filepath.Join(t.TempDir(), "terraform")
	if err := os.WriteFile(tf, nil, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_ACC_TERRAFORM_PATH", tf)
	t.Setenv("PATH", "")
	if got, err := FindTerraform(); err != nil || got != tf {
		t.Errorf("FindTerraform = %q, %v; want %q", got, err, tf)
	}
	t.Setenv("TF_ACC_TERRAFORM_PATH", tf+"-missing")
	if _, err := FindTerraform(); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a missing TF_ACC_TERRAFORM_PATH: %v, want an error naming it", err)
	}
}

func TestFindTerraformSaysHowToInstallIt(t *testing.T) {
	t.Setenv("TF_ACC_TERRAFORM_PATH", "")
	t.Setenv("PATH", t.TempDir())
	_, err := FindTerraform()
	if err == nil {
		t.Fatal("no terraform anywhere, yet FindTerraform succeeded")
	}
	for _, want := range []string{"Terraform >= 1.11", "never downloaded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
