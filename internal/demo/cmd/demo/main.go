// Command demo is `make demo`: against a throwaway in-repo coordinator, it
// applies examples/demo (the groups at their initial shard counts), plans a
// shard count change into a saved plan, prints the resharding preview read
// from that plan file, applies the saved plan and requires the next plan to
// be empty, then prints the coordinator's audit trail of the run. Run it
// from the repository root:
//
//	go run ./internal/demo/cmd/demo
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

func main() {
	var o demo.Options
	flag.StringVar(&o.ModuleRoot, "repo", ".", "repository root (where the provider is built)")
	flag.StringVar(&o.Config, "config", "", "configuration to apply (default <repo>/examples/demo/main.tf)")
	flag.BoolVar(&o.KeepWorkDir, "keep", false, "keep the temporary working directory")
	timeout := flag.Duration("timeout", 10*time.Minute, "give up after this long")
	flag.Parse()
	o.Out = os.Stdout
	o.NoColor = os.Getenv("NO_COLOR") != "" || !isTerminal(os.Stdout)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := demo.Run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "\ndemo failed:", err)
		cancel()
		stop()
		os.Exit(1)
	}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
