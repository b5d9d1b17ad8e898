package provider

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

const snapshotProject = "terraform-provider-redisstreamcoordinator"

// readSHA256SUMS parses goreleaser's checksum file: file name -> sha256.
func readSHA256SUMS(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("%s: malformed line %q", filepath.Base(path), line)
		}
		sums[name] = sum
	}
	return sums
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// zipNames lists the files of a release zip.
func zipNames(t *testing.T, path string) []string {
	t.Helper()
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var names []string
	for _, f := range r.File {
		names = append(names, f.Name)
	}
	return names
}

// lockFileWith is a dependency lock file recording the given hashes for the
// provider at version 0.1.0, as `terraform providers lock` writes from a
// registry's signed SHA256SUMS.
func lockFileWith(host string, hashes ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider %q {\n  version     = \"0.1.0\"\n  constraints = \"~> 0.1.0\"\n  hashes = [\n", host+"/"+acctest.ProviderSource)
	for _, h := range hashes {
		fmt.Fprintf(&b, "    %q,\n", h)
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}

// `make release-snapshot` builds what .goreleaser.yml releases (for this
// platform only, to stay fast), and terraform init accepts it from a
// filesystem mirror in the packed layout a registry's files are served in:
// the zip passes the lock file's `zh:` hashes taken from the SHA256SUMS (a
// zip not matching them is refused), the lock file keeps them, the manifest
// says protocol 6, and the installed provider plans the README's first
// configuration. Under Terraform and OpenTofu (make test's OpenTofu pass).
func TestAccReleaseSnapshot_mirror(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	env := acctest.New(t, acctest.Options{EveryNewerCLI: true}) // each CLI's registry host
	env.RequireInRepo(t, "the README uses fixed names such as orders/order-service, which would collide on a shared coordinator")
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}

	// goreleaser itself comes from the Go module proxy on first use, as make
	// test builds it; the release build is offline: the single-target build
	// needs only the modules the provider builds with
	// (scripts/release-snapshot.sh drops the `go mod download` hook, which
	// fetches the whole module graph, from its copy).
	runMake(t, nil, "goreleaser")
	runMake(t, []string{"GOOS=" + runtime.GOOS, "GOARCH=" + runtime.GOARCH, "GOPROXY=off"},
		"release-snapshot", "SNAPSHOT_SINGLE_TARGET=1")
	dist := filepath.Join("..", "..", "dist")
	prefix := snapshotProject + "_0.1.0_"
	sums := readSHA256SUMS(t, filepath.Join(dist, prefix+"SHA256SUMS"))
	zipName := prefix + runtime.GOOS + "_" + runtime.GOARCH + ".zip"
	zipSum, ok := sums[zipName]
	if !ok {
		t.Fatalf("the SHA256SUMS does not list %s: %v", zipName, sums)
	}
	zipPath := filepath.Join(dist, zipName)
	if got := fileSHA256(t, zipPath); got != zipSum {
		t.Fatalf("%s has sha256 %s, the SHA256SUMS says %s", zipName, got, zipSum)
	}
	// The binary at the top of the zip, named as Terraform looks for it; the
	// LICENSE goes with it, as MIT asks of every copy.
	names := strings.Join(zipNames(t, zipPath), " ")
	for _, want := range []string{snapshotProject + "_v0.1.0", "LICENSE"} {
		if !strings.Contains(" "+names+" ", " "+want+" ") {
			t.Errorf("%s holds %s; want %s in it", zipName, names, want)
		}
	}
	// The registry manifest is listed under its release name, with the
	// repository's content (protocol version 6).
	if got, want := sums[prefix+"manifest.json"], fileSHA256(t, filepath.Join("..", "..", "terraform-registry-manifest.json")); got != want {
		t.Errorf("the SHA256SUMS lists %smanifest.json as %q, want the sha256 of terraform-registry-manifest.json %s", prefix, got, want)
	}
	if b, err := os.ReadFile(filepath.Join("..", "..", "terraform-registry-manifest.json")); err != nil || !strings.Contains(string(b), `"6.0"`) {
		t.Errorf("terraform-registry-manifest.json does not declare protocol 6.0: %s %v", b, err)
	}

	// The mirror: <host>/<namespace>/<type>/<zip as released>.
	root := t.TempDir()
	host := cliRegistryHost(t, tfBin)
	mirror := filepath.Join(root, "mirror", host, acctest.ProviderSource)
	if err := os.MkdirAll(mirror, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mustAbs(t, zipPath), filepath.Join(mirror, zipName)); err != nil {
		t.Fatal(err)
	}
	cliConfig := filepath.Join(root, "mirror.tfrc")
	if err := os.WriteFile(cliConfig, []byte(fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", filepath.Join(root, "mirror"))), 0o600); err != nil {
		t.Fatal(err)
	}
	log := &strings.Builder{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("terraform output:\n%s", log.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	workdir := func(name, lock string) *demo.Terraform {
		t.Helper()
		tf := &demo.Terraform{
			Bin: tfBin, Dir: filepath.Join(root, name), CLIConfig: cliConfig,
			Env:    []string{"HOME=" + root, "HTTPS_PROXY=" + offlineProxy, "HTTP_PROXY=" + offlineProxy, "NO_PROXY="},
			Stdout: log, Stderr: log,
		}
		if err := os.MkdirAll(tf.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tf.Dir, "main.tf"), []byte(readmeConfigurationFor(t, env)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tf.Dir, ".terraform.lock.hcl"), []byte(lock), 0o600); err != nil {
			t.Fatal(err)
		}
		return tf
	}

	// A zip that does not match the recorded hash is refused: the check
	// below is a real one.
	wrong := strings.Repeat("0", 64)
	if code := runCLI(ctx, t, workdir("tampered", lockFileWith(host, "zh:"+wrong)), "init", "-input=false"); code == 0 {
		t.Fatal("terraform init accepted the zip against a lock file whose zh: hash does not match it")
	}
	if !strings.Contains(log.String(), "doesn't match any of the checksums") {
		t.Errorf("terraform init failed for another reason than the checksum")
	}

	tf := workdir("work", lockFileWith(host, "zh:"+zipSum))
	if code := runCLI(ctx, t, tf, "init", "-input=false"); code != 0 {
		t.Fatalf("terraform init refused the release zip from the mirror (exit %d)", code)
	}
	lock, err := os.ReadFile(filepath.Join(tf.Dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"zh:` + zipSum + `"`, `"h1:`, `version     = "0.1.0"`} {
		if !strings.Contains(string(lock), want) {
			t.Errorf("the lock file after init has no %s:\n%s", want, lock)
		}
	}
	if code := runCLI(ctx, t, tf, "plan", "-input=false", "-detailed-exitcode"); code != 2 {
		t.Fatalf("terraform plan with the released provider exited %d, want 2 (changes)", code)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
