//go:build unix

package demo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// readmeTryIt is the README's "Try it" section: its first shell block (the
// sandbox's terminal) and its second (the user's terminal), one command a
// line, comments and blank lines dropped.
func readmeTryIt(t *testing.T) (sandbox, walk []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Try it\n")
	if !ok {
		t.Fatal(`README.md has no "## Try it" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var blocks [][]string
	for rest := section; ; {
		_, after, ok := strings.Cut(rest, "\n```shell\n")
		if !ok {
			break
		}
		block, tail, _ := strings.Cut(after, "\n```\n")
		var lines []string
		for _, l := range strings.Split(block, "\n") {
			l, _, _ = strings.Cut(l, "#")
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		blocks = append(blocks, lines)
		rest = tail
	}
	if len(blocks) != 2 {
		t.Fatalf(`the README's "Try it" section has %d shell blocks, want 2 (the sandbox's terminal, then the user's)`, len(blocks))
	}
	return blocks[0], blocks[1]
}

// syncBuffer collects a running process's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until re matches the output, or ctx ends.
func (s *syncBuffer) waitFor(ctx context.Context, re *regexp.Regexp) ([]string, error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if m := re.FindStringSubmatch(s.String()); m != nil {
			return m, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
}

// The README's "Try it" walk-through, as written: `make sandbox` in one
// terminal (on a free port here, so the test never meets a sandbox a
// developer left running), and in another `make install`, the export lines
// it printed, terraform init, apply, the shard count change and the
// migration's state, which must be DEPRECATED (completed). Ctrl-C then stops
// the sandbox cleanly.
func TestAccSandbox_readmeWalkthrough(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (runs terraform)")
	}
	t.Parallel()
	sandboxCmds, walk := readmeTryIt(t)
	if len(sandboxCmds) != 1 || sandboxCmds[0] != "make sandbox" {
		t.Fatalf("the README's sandbox terminal runs %q, want just make sandbox", sandboxCmds)
	}
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	// Terminal one: make sandbox, in its own process group, as a shell
	// runs a foreground job, so Ctrl-C (SIGINT to the group) reaches it.
	sandboxOut := &syncBuffer{}
	sandbox := exec.Command("make", "--no-print-directory", "sandbox", "SANDBOX_ADDR=127.0.0.1:0")
	sandbox.Dir = filepath.Join("..", "..")
	sandbox.Stdout, sandbox.Stderr = sandboxOut, sandboxOut
	sandbox.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sandbox.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- sandbox.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = syscall.Kill(-sandbox.Process.Pid, syscall.SIGKILL)
			<-exited //nolint:errcheck // killed: its exit status says nothing
		}
		if t.Failed() {
			t.Logf("make sandbox:\n%s", sandboxOut.String())
		}
	})
	exports, err := sandboxOut.waitFor(ctx, regexp.MustCompile(`(?m)^export (REDIS_STREAM_COORDINATOR_ENDPOINT=\S+)\n`+
		`export (REDIS_STREAM_COORDINATOR_USERNAME=\S+)\nexport (REDIS_STREAM_COORDINATOR_PASSWORD=\S+)\n`))
	if err != nil {
		t.Fatalf("make sandbox printed no export lines: %v", err)
	}

	// Terminal two: a fresh HOME, no CLI configuration, no network.
	home := t.TempDir()
	tfOut := &syncBuffer{}
	tf := &Terraform{Bin: tfBin, Dir: home, Stdout: tfOut, Stderr: tfOut, Env: append([]string{
		"HOME=" + home, "XDG_DATA_HOME=", "XDG_CONFIG_HOME=",
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9", "http_proxy=http://127.0.0.1:9",
		"NO_PROXY=", "no_proxy=",
	}, exports[1:]...)}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the walk-through's terraform output:\n%s", tfOut.String())
		}
	})
	applies := 0
	for _, line := range walk {
		args := strings.Fields(line)
		switch {
		case line == "make install":
			install := exec.CommandContext(ctx, "make", "--no-print-directory", "install")
			install.Dir = filepath.Join("..", "..")
			install.Env = append(os.Environ(), "HOME="+home)
			install.Env = append(install.Env, goEnv(t)...)
			if out, err := install.CombinedOutput(); err != nil {
				t.Fatalf("make install: %v\n%s", err, out)
			}
		case args[0] == "cd" && len(args) == 2:
			tf.Dir = filepath.Join(home, args[1])
			copyDir(t, filepath.Join("..", "..", args[1]), tf.Dir)
		case args[0] == "terraform":
			if len(args) > 1 && args[1] == "apply" {
				applies++
				if applies == 2 {
					// The README's comment: once the sandbox shows the
					// consumer of orders joined.
					// The sandbox lists the groups every 100 ms: a minute is
					// ample even on a loaded machine.
					jctx, jcancel := context.WithTimeout(ctx, time.Minute)
					_, err := sandboxOut.waitFor(jctx, regexp.MustCompile(`\S+ joined orders/order-service \(live\)`))
					jcancel()
					if err != nil {
						t.Fatalf("the sandbox's consumer of orders/order-service never joined: %v", err)
					}
				}
			}
			tf.Stdin = strings.NewReader("yes\n")
			_, _ = tfOut.Write([]byte("\n$ " + line + "\n"))
			if code, err := tf.Run(ctx, append(args[1:], "-no-color")...); err != nil || code != 0 {
				t.Fatalf("%s: exit %d, %v", line, code, err)
			}
		default:
			t.Fatalf("the README's walk-through runs %q, which this test does not know how to replay", line)
		}
	}
	text := tfOut.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Installing ghkdqhrbals/redisstreamcoordinator v0\.1\.0`),
		regexp.MustCompile(`(?s)\$ terraform apply\n.*Apply complete! Resources: 3 added, 0 changed, 0 destroyed\.`),
		regexp.MustCompile(`(?s)\$ terraform apply -var orders_shard_count=8\n.*Apply complete! Resources: 0 added, 1 changed, 0 destroyed\.`),
		// DEPRECATED is the contract's state of a completed migration.
		regexp.MustCompile(`(?s)\$ terraform output orders_migration_state\n"DEPRECATED"`),
	} {
		if !want.MatchString(text) {
			t.Errorf("the walk-through's output lacks %s", want)
		}
	}
	if applies != 2 {
		t.Errorf("the README's walk-through runs terraform apply %d times, want 2 (the groups, then the change)", applies)
	}

	// Ctrl-C in terminal one.
	if err := syscall.Kill(-sandbox.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		// make ends as interrupted (killed by SIGINT, or 130); the sandbox
		// itself stopped cleanly, which it reports.
		var exit *exec.ExitError
		if err != nil && (!errors.As(err, &exit) || !interrupted(exit)) {
			t.Errorf("make sandbox ended with %v after Ctrl-C", err)
		}
	case <-ctx.Done():
		t.Fatal("make sandbox did not stop after Ctrl-C")
	}
	if !strings.Contains(sandboxOut.String(), "==> Sandbox stopped") {
		t.Errorf("the sandbox did not report a clean stop")
	}
}

// interrupted says whether a process ended because of SIGINT.
func interrupted(exit *exec.ExitError) bool {
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return exit.ExitCode() == 130 || ok && ws.Signaled() && ws.Signal() == syscall.SIGINT
}

// goEnv keeps the go command's caches where they are when HOME moves.
func goEnv(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	v := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(v) != 3 {
		t.Fatalf("go env printed %q", out)
	}
	return []string{"GOCACHE=" + v[0], "GOMODCACHE=" + v[1], "GOPATH=" + v[2]}
}

// copyDir copies the files of src (not its subdirectories) into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
