package demo

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// SandboxAddr is where `make sandbox` listens unless told otherwise: a fixed
// loopback port, so the endpoint a user exports stays the same from one run
// to the next.
const SandboxAddr = "127.0.0.1:18090"

// ConsumerMode is what the sandbox's fake consumers do.
type ConsumerMode string

const (
	// ConsumersLive: a consumer joins every group and takes its shards, as
	// a live fleet does, so scale-outs complete.
	ConsumersLive ConsumerMode = "live"
	// ConsumersStuck: a consumer joins every group but never takes a shard,
	// like one whose workers hung: a scale-out stays ACTIVE.
	ConsumersStuck ConsumerMode = "stuck"
	// ConsumersNone: no consumer, as for a group whose service is not
	// deployed yet: the provider warns and refuses what cannot complete.
	ConsumersNone ConsumerMode = "none"
)

// ParseConsumerMode accepts live, stuck or none.
func ParseConsumerMode(s string) (ConsumerMode, error) {
	switch m := ConsumerMode(s); m {
	case ConsumersLive, ConsumersStuck, ConsumersNone:
		return m, nil
	}
	return "", fmt.Errorf("unknown consumer mode %q: want live, stuck or none", s)
}

// SandboxOptions configure RunSandbox.
type SandboxOptions struct {
	// Addr is the listen address; default SandboxAddr.
	Addr      string
	Consumers ConsumerMode
	Out       io.Writer
}

// The sandbox's principals: Terraform's WRITE one and the consumers' MEMBER
// one, with passwords made up per run.
const (
	sandboxWriter   = "sandbox-terraform"
	sandboxConsumer = "sandbox-consumer"
)

// RunSandbox serves the in-repo coordinator until ctx is done, with the
// fake consumers o.Consumers asks for, and prints the provider's settings.
// It stops every consumer (each leaves its group) and the coordinator before
// it returns.
func RunSandbox(ctx context.Context, o SandboxOptions) error {
	if o.Addr == "" {
		o.Addr = SandboxAddr
	}
	if o.Consumers == "" {
		o.Consumers = ConsumersLive
	}
	if err := loopbackOnly(o.Addr); err != nil {
		return err
	}
	writer := acctest.Credentials{Username: sandboxWriter, Password: randomSecret()}
	member := acctest.Credentials{Username: sandboxConsumer, Password: randomSecret()}
	coord := coordinator.New(coordinator.Options{
		Users: []coordinator.User{
			{Username: writer.Username, Password: writer.Password, Roles: []coordinator.Role{"WRITE"}},
			{Username: member.Username, Password: member.Password, Roles: []coordinator.Role{"MEMBER"}},
		},
		TokenSecret:           randomSecret(),
		AuthenticateMemberAPI: true,
		CoordinatorID:         "sandbox-coordinator",
		// The demo's fast pace: a scale-out completes in about a second.
		TickInterval:      100 * time.Millisecond,
		HeartbeatInterval: 200 * time.Millisecond,
		MemberLeaseTTL:    5 * time.Second,
		RebalanceTimeout:  10 * time.Second,
	})
	if err := coord.Start(o.Addr); err != nil {
		return fmt.Errorf("starting the coordinator on %s: %w (is a sandbox already running? make sandbox SANDBOX_ADDR=127.0.0.1:<port> picks another address)", o.Addr, err)
	}
	p := printer{w: o.Out}
	api, err := client.New(client.Config{
		Endpoint: coord.URL(), Username: writer.Username, Password: writer.Password,
		RunID: "sandbox", MaxRetries: 2, RetryWaitMin: 50 * time.Millisecond, RetryWaitMax: time.Second, RequestTimeout: 10 * time.Second,
	})
	if err != nil {
		_ = coord.Close()
		return err
	}
	printSandboxBanner(o.Out, coord.URL(), writer, o.Consumers)

	fleet := &sandboxFleet{mode: o.Consumers, endpoint: coord.URL(), creds: member, p: p, consumers: map[string]*acctest.Consumer{}}
	fleet.watch(ctx, api)
	fleet.stopAll()
	if err := coord.Close(); err != nil {
		return fmt.Errorf("stopping the coordinator: %w", err)
	}
	p.section("Sandbox stopped")
	return nil
}

// printSandboxBanner prints where the coordinator listens, the provider's
// settings as environment variables and as a provider block, and what the
// consumers do.
func printSandboxBanner(w io.Writer, url string, writer acctest.Credentials, mode ConsumerMode) {
	p := printer{w: w}
	p.section(fmt.Sprintf("Sandbox coordinator listening on %s (in-memory store; Ctrl-C stops it)", url))
	switch mode {
	case ConsumersLive:
		p.linef("a fake consumer joins every group as soon as it exists and takes its shards: scale-outs complete")
	case ConsumersStuck:
		p.linef("a stuck consumer joins every group but never takes a shard: a scale-out stays ACTIVE")
	case ConsumersNone:
		p.linef("no consumers: a scale-out cannot complete by itself")
	}
	p.section("In another terminal, configure the provider with")
	fmt.Fprintf(w, "export REDIS_STREAM_COORDINATOR_ENDPOINT=%s\n", url)
	fmt.Fprintf(w, "export REDIS_STREAM_COORDINATOR_USERNAME=%s\n", writer.Username)
	fmt.Fprintf(w, "export REDIS_STREAM_COORDINATOR_PASSWORD=%s\n", writer.Password)
	p.section("or a provider block")
	fmt.Fprintf(w, "provider \"redisstreamcoordinator\" {\n  endpoint = %q\n  username = %q\n  password = %q\n}\n", url, writer.Username, writer.Password)
	p.section("Consumers")
}

// loopbackOnly refuses an address other machines could reach: the sandbox
// serves plain http and prints its credentials.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("sandbox address %q: %w (use 127.0.0.1:<port>)", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("sandbox address %q is not a loopback address: the sandbox serves plain http with the credentials it prints, "+
			"so it listens on loopback only (use 127.0.0.1:<port> or [::1]:<port>)", addr)
	}
	return nil
}
