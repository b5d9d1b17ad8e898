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

func TestIsOpenTofuTellsTheBinariesApart(t *testing.T) {
	dir := t.TempDir()
	fake := func(name, first string) string {
		path := filepath.Join(dir, name)
		script := "#!/bin/sh\necho\necho 'A warning about the CLI configuration'\necho '" + first + "'\necho 'on linux_amd64'\n"
		if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		first string
		tofu  bool
		fails bool
	}{
		{"OpenTofu v1.12.6", true, false},
		{"Terraform v1.11.4", false, false},
		{"something else 1.0", false, true},
	} {
		got, err := IsOpenTofu(fake(strings.Fields(tc.first)[0], tc.first))
		if got != tc.tofu || (err != nil) != tc.fails {
			t.Errorf("IsOpenTofu(%q) = %v, %v; want %v, error %v", tc.first, got, err, tc.tofu, tc.fails)
		}
	}
}

func TestPrepareTerraformSetsTheOpenTofuRegistryHost(t *testing.T) {
	tofu := filepath.Join(t.TempDir(), "tofu")
	if err := os.WriteFile(tofu, []byte("#!/bin/sh\necho 'OpenTofu v1.12.6'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TF_ACC", "1")
	t.Setenv("TF_ACC_TERRAFORM_PATH", tofu)
	t.Setenv("TF_ACC_PROVIDER_HOST", "")
	t.Setenv("TF_ACC_PROVIDER_NAMESPACE", "")
	t.Setenv("TF_CLI_CONFIG_FILE", "")
	t.Setenv("TF_IN_AUTOMATION", "")
	t.Setenv("CHECKPOINT_DISABLE", "")
	if err := PrepareTerraform(); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("TF_ACC_PROVIDER_HOST"); got != OpenTofuRegistryHost {
		t.Errorf("under OpenTofu TF_ACC_PROVIDER_HOST = %q, want %q", got, OpenTofuRegistryHost)
	}
}
