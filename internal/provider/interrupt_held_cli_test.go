package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// serveInProcess serves p from this test process over go-plugin's reattach
// protocol, as `terraform-provider-… -debug` does, so that a test running
// the terraform CLI can hand the provider values a built binary cannot
// take (its settle timing). It returns the TF_REATTACH_PROVIDERS value,
// naming the provider under the registry hosts Terraform and OpenTofu
// resolve the tests' source against. The server stops with the test.
func serveInProcess(t *testing.T, p *coordinatorProvider) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	configs := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	served := make(chan error, 1)
	go func() {
		served <- tf6server.Serve(RegistryAddress, NewProtocol6(p), tf6server.WithDebug(ctx, configs, closed),
			tf6server.WithGoPluginLogger(hclog.NewNullLogger()), tf6server.WithLoggingSink(t))
	}()
	var rc *plugin.ReattachConfig
	select {
	case rc = <-configs:
	case err := <-served:
		cancel()
		t.Fatalf("serving the provider in process: %v", err)
	case <-time.After(time.Minute):
		cancel()
		t.Fatal("the in-process provider server did not start")
	}
	t.Cleanup(func() {
		cancel()
		<-closed
	})
	type addr struct{ Network, String string }
	type reattach struct {
		Protocol        string
		ProtocolVersion int
		Pid             int
		Test            bool
		Addr            addr
	}
	one := reattach{Protocol: string(rc.Protocol), ProtocolVersion: rc.ProtocolVersion, Pid: rc.Pid, Test: rc.Test,
		Addr: addr{Network: rc.Addr.Network(), String: rc.Addr.String()}}
	v, err := json.Marshal(map[string]reattach{
		"registry.terraform.io/" + acctest.ProviderSource: one,
		"registry.opentofu.org/" + acctest.ProviderSource: one,
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(v)
}

// graceTimer is one phase of the grace period, handed to the test instead
// of started (settleTiming.after).
type graceTimer struct {
	d   time.Duration
	end func()
}

// TestAccInterrupt_heldCreateAnswerIsReadBack (issue 42 §3): a gateway
// forwards the create (the coordinator applies it, 201) and holds the
// answer; the user presses Ctrl-C. The held answer never comes: the first
// phase of the grace the interrupt starts runs out while the provider waits
// for it. What the provider keeps of the grace after that (its read-back's
// share) does not run out before terraform has exited: the read-back is a
// few loopback reads. The one read-back settles the create: the group is in
// state, the next plan creates nothing, and one create was sent.
//
// Spending the whole grace on the held answer (the behaviour before the
// fix) ends everything with that first phase: the read-back is "not sent:
// context canceled", the group exists on the coordinator, and state is
// empty.
func TestAccInterrupt_heldCreateAnswerIsReadBack(t *testing.T) {
	timers := make(chan graceTimer, 8)
	timing := testTiming()
	timing.after = func(d time.Duration, end func()) { timers <- graceTimer{d, end} }
	f := newInterruptFixture(t, t.TempDir())
	f.tf.Env = append(f.tf.Env, "TF_REATTACH_PROVIDERS="+serveInProcess(t, &coordinatorProvider{version: "test", timing: timing}))
	p, g := acctest.RandomName("sigint-held"), "svc"
	f.write(groupHCL("test", p, g, "initial_shard_count = 3"))

	var released atomic.Bool
	t.Cleanup(func() { released.Store(true) })
	reached := make(chan struct{})
	f.coord.InjectFault(coordinator.Fault{Method: http.MethodPost, Route: coordinator.RouteGroup, Kind: coordinator.FaultHangAfterApply,
		Delay: 3 * time.Minute, Until: released.Load, OnMatch: func() { close(reached) }})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	proc, err := f.tf.Start(ctx, "apply", "-auto-approve", "-no-color")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached:
	case <-ctx.Done():
		t.Fatal("the coordinator never received the create")
	}
	if err := proc.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case first := <-timers:
		first.end() // the held answer never comes
	case <-ctx.Done():
		t.Fatal("the provider never started its grace period")
	}
	if _, err := proc.Wait(); err != nil {
		t.Fatalf("terraform apply: %v", err)
	}
	for len(timers) > 0 {
		(<-timers).end()
	}

	grp, ok := f.state()["redisstreamcoordinator_group.test"]
	if !ok || grp.AttributeValues["shard_count"] != float64(3) {
		t.Fatalf("after the interrupted apply the group must be in state with 3 shards, got %+v", grp)
	}
	f.outputSays("Adopted a group whose create response was lost", "was still outstanding when the operation ended",
		"was read back once")
	if strings.Contains(f.out.String(), "terraform import") {
		t.Error("the interrupted apply told the user to import its own group")
	}
	if code := f.run("plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the next plan must plan no create, exit code %d", code)
	}
	f.sentOnce(http.MethodPost, coordinator.RouteGroup)
	if events := terraformMutations(f.coord, p, "CREATE_GROUP"); len(events) != 1 || events[0].Outcome != "SUCCESS" {
		t.Fatalf("want one create, got %+v", events)
	}
}
