package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// ProviderBinary is the provider executable's name, as Terraform expects it
// in a dev override directory.
const ProviderBinary = "terraform-provider-redisstreamcoordinator"

// BuildProvider compiles the provider in moduleRoot into dir and returns the
// binary's path.
func BuildProvider(ctx context.Context, moduleRoot, dir, version string) (string, error) {
	out := filepath.Join(dir, ProviderBinary)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-X main.version="+version, "-o", out, ".")
	cmd.Dir = moduleRoot
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, msg)
	}
	return out, nil
}

// DevOverride takes the provider at Source from the binary in Dir.
type DevOverride struct{ Source, Dir string }

// WriteCLIConfig writes a Terraform CLI configuration that takes the provider
// from providerDir, and any other provider named in more from its directory
// (dev overrides), and everything else from its origin. With it, plan and
// apply work without terraform init, which could not reach a registry
// offline; `terraform get` installs local modules if needed.
func WriteCLIConfig(path, providerDir string, more ...DevOverride) error {
	var cfg strings.Builder
	cfg.WriteString("provider_installation {\n  dev_overrides {\n")
	for _, o := range append([]DevOverride{{acctest.ProviderSource, providerDir}}, more...) {
		fmt.Fprintf(&cfg, "    %q = %q\n", o.Source, o.Dir)
	}
	cfg.WriteString("  }\n  direct {}\n}\n")
	return os.WriteFile(path, []byte(cfg.String()), 0o600)
}

// Terraform runs the terraform CLI in one working directory with an
// environment of its own.
type Terraform struct {
	Bin       string
	Dir       string
	CLIConfig string
	// Env is added to the filtered process environment, e.g. the provider's
	// REDIS_STREAM_COORDINATOR_* settings; it wins over inherited settings.
	Env []string
	// WithoutLogging also leaves the inherited TF_LOG* settings out, so a
	// developer's logging cannot slow a timed run (plugin SDK log levels
	// set in Env still apply).
	WithoutLogging bool
	// Stdin, when set, answers terraform's prompts (apply's "yes").
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Run runs terraform with args, streaming its output, and returns its exit
// code. err is set only when terraform could not run or was interrupted.
func (tf *Terraform) Run(ctx context.Context, args ...string) (int, error) {
	cmd := tf.command(ctx, args)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tf.Stdin, tf.Stdout, tf.Stderr
	return exitCode(cmd.Run())
}

// Started is a terraform command running in the background (Start).
type Started struct{ cmd *exec.Cmd }

// Start runs terraform with args in the background, streaming its output as
// Run does. The caller signals it (Signal) and must Wait for it.
func (tf *Terraform) Start(ctx context.Context, args ...string) (*Started, error) {
	cmd := tf.command(ctx, args)
	cmd.Stdout, cmd.Stderr = tf.Stdout, tf.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Started{cmd: cmd}, nil
}

// Signal sends sig to the terraform process only (not to its providers), as
// a CI runner cancelling a job does with os.Interrupt.
func (s *Started) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }

// Wait waits for the command and returns its exit code, as Run does.
func (s *Started) Wait() (int, error) { return exitCode(s.cmd.Wait()) }

// Output runs terraform with args and returns its standard output; a
// non-zero exit is an error carrying standard error.
func (tf *Terraform) Output(ctx context.Context, args ...string) ([]byte, error) {
	cmd := tf.command(ctx, args)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("terraform %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

func (tf *Terraform) command(ctx context.Context, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, tf.Bin, args...)
	cmd.Dir = tf.Dir
	env := cleanEnv(os.Environ())
	if tf.WithoutLogging {
		env = withoutLogging(env)
	}
	cmd.Env = append(env, "CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE="+tf.CLIConfig)
	cmd.Env = append(cmd.Env, tf.Env...)
	// Let terraform stop its provider and release state on cancellation.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 15 * time.Second
	return cmd
}

func exitCode(err error) (int, error) {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode(), nil
	default:
		return -1, err
	}
}

// cleanEnv drops settings that would point terraform or the provider
// somewhere else: a developer may have REDIS_STREAM_COORDINATOR_* exported
// for a live coordinator, TF_CLI_ARGS adding flags to every command, or
// TF_REATTACH_PROVIDERS naming a provider process started for debugging.
func cleanEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "REDIS_STREAM_COORDINATOR_"),
			strings.HasPrefix(name, "TF_CLI_ARGS"),
			name == "TF_CLI_CONFIG_FILE", name == "TF_DATA_DIR", name == "TF_WORKSPACE",
			name == "TF_PLUGIN_CACHE_DIR", name == "TF_INPUT", name == "TF_REATTACH_PROVIDERS":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// withoutLogging drops Terraform's and the plugin SDKs' log settings
// (TF_LOG, TF_LOG_PATH, TF_LOG_CORE, TF_LOG_PROVIDER*, TF_LOG_SDK*).
func withoutLogging(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(name, "TF_LOG") {
			out = append(out, kv)
		}
	}
	return out
}
