package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// Terraform runs one terraform binary in throw-away working directories.
type Terraform struct {
	Path string
	// Env is added to every command's environment (and so the providers').
	Env []string
	// cliConfig holds the dev_overrides for both providers, so no
	// `terraform init` (and no registry) is ever needed.
	cliConfig string
	tmp       string
}

// NewTerraform writes the CLI configuration under tmp.
func NewTerraform(path, tmp string, bins Binaries) (*Terraform, error) {
	cfg := filepath.Join(tmp, "bench.tfrc")
	if err := demo.WriteCLIConfig(cfg, bins.ProviderDir, demo.DevOverride{Source: noopSource, Dir: bins.NoopDir}); err != nil {
		return nil, err
	}
	return &Terraform{Path: path, cliConfig: cfg, tmp: tmp}, nil
}

// CLI runs terraform in dir with the benchmark's CLI configuration and
// environment. A developer's TF_LOG settings are left out: logging would
// skew the timings.
func (tf *Terraform) CLI(dir string) *demo.Terraform {
	return &demo.Terraform{
		Bin: tf.Path, Dir: dir, CLIConfig: tf.cliConfig, WithoutLogging: true,
		Env: append([]string{"TF_IN_AUTOMATION=1"}, tf.Env...),
	}
}

// Workspace is one working directory with its own configuration and state.
type Workspace struct {
	tf  *Terraform
	Dir string
}

// NewWorkspace creates an empty working directory.
func (tf *Terraform) NewWorkspace(name string) (*Workspace, error) {
	dir, err := os.MkdirTemp(tf.tmp, name+"-")
	if err != nil {
		return nil, err
	}
	return &Workspace{tf: tf, Dir: dir}, nil
}

// WriteConfig replaces the workspace's main.tf.
func (w *Workspace) WriteConfig(hcl string) error {
	return os.WriteFile(filepath.Join(w.Dir, "main.tf"), []byte(hcl), 0o600)
}

// Run is one terraform command's outcome.
type Run struct {
	Wall time.Duration
	// End is when the terraform process had exited.
	End time.Time
	// PeakRSSKiB is the largest peak RSS among the provider processes the
	// command started; Instances is how many it started.
	PeakRSSKiB int64
	Instances  int
	// CPU is the processor time (user + system) of terraform and every
	// process it started; ProviderCPU that of the provider processes alone.
	CPU, ProviderCPU time.Duration
	Output           string
}

// Terraform runs `terraform <args>` and measures it. A non-zero exit is an
// error carrying the output.
func (w *Workspace) Terraform(ctx context.Context, args ...string) (Run, error) {
	rssDir, err := os.MkdirTemp(w.tf.tmp, "rss-")
	if err != nil {
		return Run{}, err
	}
	defer os.RemoveAll(rssDir)
	cli := w.tf.CLI(w.Dir)
	cli.Env = append(cli.Env, "BENCH_RSS_DIR="+rssDir)
	var out bytes.Buffer
	cli.Stdout, cli.Stderr = &out, &out
	before := childrenCPU()
	start := time.Now()
	code, err := cli.Run(ctx, args...)
	r := Run{End: time.Now(), Output: out.String()}
	r.Wall = r.End.Sub(start)
	r.CPU = childrenCPU() - before
	if err == nil && code != 0 {
		err = fmt.Errorf("exit status %d", code)
	}
	if err != nil {
		return r, fmt.Errorf("terraform %s: %w\n%s", strings.Join(args, " "), err, tail(r.Output, 4000))
	}
	r.PeakRSSKiB, r.Instances, r.ProviderCPU, err = readRSS(rssDir)
	return r, err
}

// childrenCPU is the processor time of this process's waited-for children
// and their descendants (terraform waits for its providers, the wrapper for
// the real binary). The benchmark runs one terraform at a time.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Apply runs a non-interactive apply.
func (w *Workspace) Apply(ctx context.Context, extra ...string) (Run, error) {
	return w.Terraform(ctx, append([]string{"apply", "-input=false", "-no-color", "-auto-approve"}, extra...)...)
}

// Plan runs a refreshing plan and insists that it proposes nothing: a plan
// of unchanged resources that shows changes would mean the provider reads
// back something other than what it wrote.
func (w *Workspace) Plan(ctx context.Context) (Run, error) {
	r, err := w.Terraform(ctx, "plan", "-input=false", "-no-color", "-refresh=true")
	if err == nil && !strings.Contains(r.Output, "No changes.") {
		err = fmt.Errorf("plan of an unchanged configuration proposes changes:\n%s", tail(r.Output, 4000))
	}
	return r, err
}

// RefreshOnly runs `terraform plan -refresh-only` and insists that it
// finds nothing changed outside Terraform.
func (w *Workspace) RefreshOnly(ctx context.Context) (Run, error) {
	r, err := w.Terraform(ctx, "plan", "-input=false", "-no-color", "-refresh-only")
	if err == nil && !strings.Contains(r.Output, "No changes.") {
		err = fmt.Errorf("refresh of an unchanged workspace finds changes:\n%s", tail(r.Output, 4000))
	}
	return r, err
}

func readRSS(dir string) (peak int64, instances int, cpu time.Duration, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return 0, 0, 0, err
		}
		var kb, us int64
		if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &kb, &us); err != nil {
			return 0, 0, 0, fmt.Errorf("RSS report %s: %w", e.Name(), err)
		}
		peak = max(peak, kb)
		cpu += time.Duration(us) * time.Microsecond
		instances++
	}
	return peak, instances, cpu, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
