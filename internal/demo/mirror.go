package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// mirrorHosts are the registry hosts a host-less source address resolves
// against: Terraform's and OpenTofu's. The mirror holds the provider under
// both, as make install does, so either CLI installs it.
func mirrorHosts() []string { return []string{"registry.terraform.io", acctest.OpenTofuRegistryHost} }

// InstallMirror lays the provider binary out in a filesystem mirror at dir,
// in the unpacked layout terraform init reads
// (<host>/<namespace>/<type>/<version>/<os>_<arch>/terraform-provider-<type>_v<version>),
// as make install does for the implied local mirror. version must be a
// plain semver: Terraform selects a pre-release only when a constraint names
// it exactly.
func InstallMirror(dir, bin, version string) error {
	src, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	for _, host := range mirrorHosts() {
		d := filepath.Join(dir, host, acctest.ProviderSource, version, runtime.GOOS+"_"+runtime.GOARCH)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(d, ProviderBinary+"_v"+version), src, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// WriteMirrorCLIConfig writes a Terraform CLI configuration that installs
// the provider from the filesystem mirror at mirrorDir (terraform init) and
// every other provider from its origin. Unlike dev overrides, it makes
// Terraform print no "Provider development overrides are in effect" warning,
// and it is how a user runs a provider installed with make install.
func WriteMirrorCLIConfig(path, mirrorDir string) error {
	var include string
	for i, host := range mirrorHosts() {
		if i > 0 {
			include += ", "
		}
		include += fmt.Sprintf("%q", host+"/"+acctest.ProviderSource)
	}
	cfg := fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path    = %q\n    include = [%s]\n  }\n  direct {\n    exclude = [%s]\n  }\n}\n",
		mirrorDir, include, include)
	return os.WriteFile(path, []byte(cfg), 0o600)
}
