// Command sandbox is `make sandbox`: the in-repo coordinator on a fixed
// loopback port with a fake consumer for every group it holds, so a
// resharding applied from another terminal completes as with a live fleet.
// It prints the provider's settings and runs until Ctrl-C. Run it from the
// repository root:
//
//	go run ./internal/demo/cmd/sandbox [-addr 127.0.0.1:18090] [-consumers live|stuck|none]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	addr := fs.String("addr", demo.SandboxAddr, "listen address")
	consumers := fs.String("consumers", string(demo.ConsumersLive),
		"what each group's fake consumer does: live (takes its shards: scale-outs complete), stuck (joins, takes nothing: a scale-out stays ACTIVE) or none (no consumer)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	mode, err := demo.ParseConsumerMode(*consumers)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return demo.RunSandbox(ctx, demo.SandboxOptions{Addr: *addr, Consumers: mode, Out: os.Stdout})
}
