package demo

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// startSandbox runs RunSandbox on a free port until the test ends and
// returns a client with the WRITE credentials it printed.
func startSandbox(ctx context.Context, t *testing.T, mode ConsumerMode) (*client.Client, *syncBuffer) {
	t.Helper()
	out := &syncBuffer{}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- RunSandbox(sctx, SandboxOptions{Addr: "127.0.0.1:0", Consumers: mode, Out: out}) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("RunSandbox: %v", err)
		}
		if t.Failed() {
			t.Logf("sandbox output:\n%s", out.String())
		}
	})
	m, err := out.waitFor(ctx, regexp.MustCompile(`(?m)^export REDIS_STREAM_COORDINATOR_ENDPOINT=(\S+)\nexport REDIS_STREAM_COORDINATOR_USERNAME=(\S+)\nexport REDIS_STREAM_COORDINATOR_PASSWORD=(\S+)\n`))
	if err != nil {
		t.Fatalf("the sandbox printed no settings: %v", err)
	}
	api, err := client.New(client.Config{Endpoint: m[1], Username: m[2], Password: m[3], RunID: "sandbox-test", MaxRetries: 1, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return api, out
}

// waitMember waits until the group's only member satisfies ok.
func waitMember(ctx context.Context, t *testing.T, api *client.Client, p, g string, ok func(m client.Member) bool) client.Member {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		members, err := api.Members(ctx, p, g)
		if err == nil && len(members) == 1 && ok(members[0]) {
			return members[0]
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s/%s: members %+v (%v): %v", p, g, members, err, ctx.Err())
		case <-tick.C:
		}
	}
}

// Each consumer mode of make sandbox: a live consumer takes its shards, a
// stuck one hears its grant and takes none, and with none no member joins.
func TestSandboxConsumerModes(t *testing.T) {
	for _, mode := range []ConsumerMode{ConsumersLive, ConsumersStuck, ConsumersNone} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			api, out := startSandbox(ctx, t, mode)
			shards := int32(2)
			if _, err := api.CreateGroup(ctx, "orders", "order-service", &shards, client.Mutation{}); err != nil {
				t.Fatal(err)
			}
			switch mode {
			case ConsumersLive:
				waitMember(ctx, t, api, "orders", "order-service", func(m client.Member) bool { return len(m.CurrentAssignment) == 2 })
			case ConsumersStuck:
				granted := waitMember(ctx, t, api, "orders", "order-service", func(m client.Member) bool { return len(m.GrantedAssignment) > 0 })
				// A heartbeat after the grant, still owning nothing.
				after := waitMember(ctx, t, api, "orders", "order-service", func(m client.Member) bool {
					return m.LastHeartbeatAt.After(granted.LastHeartbeatAt.Time)
				})
				if len(after.CurrentAssignment) != 0 {
					t.Errorf("the stuck consumer owns %v", after.CurrentAssignment)
				}
			case ConsumersNone:
				if _, err := out.waitFor(ctx, regexp.MustCompile(`orders/order-service has no consumer \(none\)`)); err != nil {
					t.Fatal(err)
				}
				if members, err := api.Members(ctx, "orders", "order-service"); err != nil || len(members) != 0 {
					t.Errorf("members %+v (%v), want none", members, err)
				}
			}
		})
	}
}

// TestSandboxRefusesANonLoopbackAddress: the sandbox serves plain http and
// prints its credentials, so it starts on loopback only.
func TestSandboxRefusesANonLoopbackAddress(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:18090", ":18090", "192.0.2.1:18090", "sandbox.example.test:18090", "no-port"} {
		err := RunSandbox(context.Background(), SandboxOptions{Addr: addr, Out: &syncBuffer{}})
		if err == nil || !regexp.MustCompile(`sandbox address .* (is not a loopback address|\(use 127\.0\.0\.1:<port>)`).MatchString(err.Error()) {
			t.Errorf("RunSandbox(%q) = %v, want a refusal naming the loopback rule", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0"} {
		if err := loopbackOnly(addr); err != nil {
			t.Errorf("loopbackOnly(%q) = %v", addr, err)
		}
	}
}
