// Package wrap stands in for a provider binary so the benchmark can measure
// the provider's peak resident memory. Terraform starts it as the
// plugin; it runs the real binary (../real/<its own name>) with the same
// arguments, environment and standard streams, waits for it, and writes the
// child's peak RSS (getrusage ru_maxrss, the kernel's VmHWM at exit) to
// $BENCH_RSS_DIR/<name>.<pid>.kb. Sampling /proc while the provider runs
// could miss the peak; the rusage of a reaped child cannot.
package wrap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
)

// Run is the whole wrapper; it returns the provider's exit code.
func Run() int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rsswrap:", err)
		return 1
	}
	name := filepath.Base(self)
	target := filepath.Join(filepath.Dir(self), "..", "real", name)
	// No context: the wrapper lives exactly as long as the provider does.
	cmd := exec.CommandContext(context.Background(), target, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// BENCH_PROVIDER_ENV adds one VAR=value to the provider's environment
	// only (e.g. GOMEMLIMIT=64MiB), leaving Terraform's untouched.
	if extra := os.Getenv("BENCH_PROVIDER_ENV"); extra != "" {
		cmd.Env = append(os.Environ(), extra)
	}
	// If Terraform kills the wrapper, the provider must not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// go-plugin ignores interrupts in plugins and stops them over RPC; pass
	// signals on anyway so the wrapper never changes how the provider ends.
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "rsswrap:", err)
		return 1
	}
	go func() {
		for s := range signals {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	if dir := os.Getenv("BENCH_RSS_DIR"); dir != "" && cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			report := filepath.Join(dir, fmt.Sprintf("%s.%d.kb", name, cmd.Process.Pid))
			cpu := ru.Utime.Nano() + ru.Stime.Nano()
			_ = os.WriteFile(report, []byte(fmt.Sprintf("%d %d\n", ru.Maxrss, cpu/1e3)), 0o600)
		}
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr):
		return exitErr.ExitCode()
	}
	fmt.Fprintln(os.Stderr, "rsswrap:", err)
	return 1
}
