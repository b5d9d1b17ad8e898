package provider

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// Tests of what the README's "Installing" section promises: the provider
// from `make install` or from `make release-snapshot`'s artifacts, installed
// by `terraform init` itself (no dev overrides), offline, for the README's
// first configuration with its `version = "~> 0.1.0"` constraint.

// offlineProxy is where the tests point every proxy variable: nothing
// listens there, so any attempt of terraform to reach a registry fails,
// while the coordinator on a loopback address is never proxied.
const offlineProxy = "http://127.0.0.1:9"

// readmeConfigurationFor is the README's first configuration as a user runs
// it, terraform block and version constraint included, with the provider
// block pointed at env's coordinator and credentials.
func readmeConfigurationFor(t *testing.T, env *acctest.Env) string {
	t.Helper()
	f, diags := hclwrite.ParseConfig([]byte(readmeUsingTheProvider(t)), "README.md", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("the README's configuration does not parse: %s", diags.Error())
	}
	for _, block := range f.Body().Blocks() {
		if block.Type() == "provider" && len(block.Labels()) == 1 && block.Labels()[0] == TypeName {
			pointAtTestCoordinator(block.Body(), env)
		}
	}
	src := string(hclwrite.Format(f.Bytes()))
	if !strings.Contains(src, `version = "~> 0.1.0"`) {
		t.Fatalf("the README's configuration no longer pins version = \"~> 0.1.0\"; update this test with it:\n%s", src)
	}
	return src
}

// cliRegistryHost is the registry host the terraform binary resolves the
// provider's host-less source address against.
func cliRegistryHost(t *testing.T, tfBin string) string {
	t.Helper()
	tofu, err := acctest.IsOpenTofu(tfBin)
	if err != nil {
		t.Fatal(err)
	}
	if tofu {
		return acctest.OpenTofuRegistryHost
	}
	return "registry.terraform.io"
}

// runMake runs a target of the repository's GNUmakefile with extra
// environment settings, logging its output when the test fails.
func runMake(t *testing.T, env []string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("make %s:\n%s", strings.Join(args, " "), out)
}

// goEnvFor keeps the go command's caches where they are when HOME moves,
// and forbids it the network (the module cache has everything).
func goEnvFor(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	v := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(v) != 3 {
		t.Fatalf("go env printed %q", out)
	}
	return []string{"GOCACHE=" + v[0], "GOMODCACHE=" + v[1], "GOPATH=" + v[2], "GOPROXY=off"}
}

// On a fresh machine (an empty HOME, no CLI configuration, no network),
// `make install` and the README's first configuration run with
// `terraform init && terraform plan`: init finds the provider in the
// implied local mirror directory for its version and platform, under
// Terraform and under OpenTofu (make test's OpenTofu pass).
func TestAccInstall_readmeConfigurationOffline(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	t.Parallel()
	// Each CLI resolves the source against its own registry host: both run it.
	env := acctest.New(t, acctest.Options{EveryNewerCLI: true})
	env.RequireInRepo(t, "the README uses fixed names such as orders/order-service, which would collide on a shared coordinator")
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}

	home := t.TempDir()
	runMake(t, append(goEnvFor(t), "HOME="+home), "install")
	host := cliRegistryHost(t, tfBin)
	installed := filepath.Join(home, ".terraform.d", "plugins", host, acctest.ProviderSource, "0.1.0",
		runtime.GOOS+"_"+runtime.GOARCH, "terraform-provider-redisstreamcoordinator_v0.1.0")
	if _, err := os.Stat(installed); err != nil {
		t.Fatalf("make install did not put the provider where %s looks for it: %v", filepath.Base(tfBin), err)
	}

	log := &strings.Builder{}
	tf := &demo.Terraform{
		Bin: tfBin, Dir: filepath.Join(home, "work"),
		// No CLI configuration at all: ~/.terraformrc does not exist.
		CLIConfig: "",
		Env: []string{
			"HOME=" + home, "XDG_DATA_HOME=", "XDG_CONFIG_HOME=",
			"HTTPS_PROXY=" + offlineProxy, "HTTP_PROXY=" + offlineProxy, "https_proxy=" + offlineProxy, "http_proxy=" + offlineProxy,
			"NO_PROXY=", "no_proxy=",
		},
		Stdout: log, Stderr: log,
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("terraform output:\n%s", log.String())
		}
	})
	if err := os.MkdirAll(tf.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tf.Dir, "main.tf"), []byte(readmeConfigurationFor(t, env)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if code := runCLI(ctx, t, tf, "init", "-input=false"); code != 0 {
		t.Fatalf("terraform init exited %d", code)
	}
	lock, err := os.ReadFile(filepath.Join(tf.Dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`provider "` + host + "/" + acctest.ProviderSource + `"`, `version     = "0.1.0"`, `constraints = "~> 0.1.0"`} {
		if !strings.Contains(string(lock), want) {
			t.Errorf("the lock file has no %s:\n%s", want, lock)
		}
	}
	// The plan creates the group and its shard count: exit code 2.
	if code := runCLI(ctx, t, tf, "plan", "-input=false", "-detailed-exitcode"); code != 2 {
		t.Fatalf("terraform plan -detailed-exitcode exited %d, want 2 (changes)", code)
	}
	if !strings.Contains(log.String(), "2 to add") {
		t.Errorf("the plan does not add the group and its shard count")
	}
}
