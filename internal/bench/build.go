// Package bench measures the provider against the in-repo coordinator with a
// real terraform binary: plan/refresh cost next to a do-nothing provider,
// apply throughput, scale completion latency and behaviour under the
// coordinator's rate limit. `make bench` runs it through cmd/bench; nothing
// here is a test assertion, only figures for BENCHMARKS.md.
package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// The do-nothing provider's binary name and source address; dev_overrides
// maps each source address to the directory holding the binary of that name
// (the real provider's are demo.ProviderBinary and acctest.ProviderSource).
const (
	noopBinary = "terraform-provider-noop"
	noopSource = "bench/noop"
)

// Binaries is the layout the benchmark builds: each provider's rsswrap
// wrapper in its own override directory, the real binaries in real/.
type Binaries struct {
	ProviderDir string // holds the wrapper named demo.ProviderBinary
	NoopDir     string // holds the wrapper named noopBinary
}

// Build compiles the provider (as `make build` does, with demo.BuildProvider),
// the do-nothing provider and the RSS wrapper under dir.
func Build(ctx context.Context, repoRoot, dir string) (Binaries, error) {
	b := Binaries{ProviderDir: filepath.Join(dir, "provider"), NoopDir: filepath.Join(dir, "noop")}
	realDir := filepath.Join(dir, "real")
	wrapper := filepath.Join(dir, "rsswrap")
	if _, err := demo.BuildProvider(ctx, repoRoot, realDir, "0.0.0-bench"); err != nil {
		return b, err
	}
	builds := []struct{ out, pkg string }{
		{filepath.Join(realDir, noopBinary), "./internal/bench/noopprovider"},
		{wrapper, "./internal/bench/rsswrap"},
	}
	for _, bld := range builds {
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bld.out, bld.pkg)
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build %s: %w\n%s", bld.pkg, err, out)
		}
	}
	// The wrapper finds the real binary at ../real/<its own name>.
	for _, w := range []struct{ dir, name string }{{b.ProviderDir, demo.ProviderBinary}, {b.NoopDir, noopBinary}} {
		if err := os.MkdirAll(w.dir, 0o755); err != nil {
			return b, err
		}
		if err := os.Link(wrapper, filepath.Join(w.dir, w.name)); err != nil {
			return b, err
		}
	}
	return b, nil
}

// RepoRoot is the module root, where `go build .` builds the provider.
func RepoRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("run the benchmark inside the provider module")
	}
	return filepath.Dir(gomod), nil
}
