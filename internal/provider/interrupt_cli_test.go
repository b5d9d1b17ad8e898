package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// A job cancelled while a mutation is in flight (issue 20): CI runners send
// SIGINT to terraform when a newer push supersedes a job. Terraform then
// sends the provider StopProvider, which cancels every request context, and
// waits for the provider. These tests run the built provider through the
// terraform CLI, hold the mutation inside the coordinator, interrupt
// terraform, and release the mutation only once the provider has seen the
// interrupt (its log says so): the request already written is finished
// within the grace period and the state records what happened.

// interruptMarker is the provider's log line when an operation is
// interrupted with a request in flight (graceContext).
const interruptMarker = "operation interrupted while a request to the coordinator is in flight"

// interruptFixture is a terraform working directory with the built
// provider, logging the provider's warnings to a file.
type interruptFixture struct {
	t       *testing.T
	env     *acctest.Env
	coord   *coordinator.Coordinator
	tf      *demo.Terraform
	out     *strings.Builder
	logPath string
}

func newInterruptFixture(t *testing.T, providerDir string) *interruptFixture {
	env := acctest.New(t, acctest.Options{})
	c := env.RequireInRepo(t, "holds the mutation inside the coordinator until terraform was interrupted, and reads the audit log")
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	f := &interruptFixture{t: t, env: env, coord: c, out: &strings.Builder{}, logPath: filepath.Join(root, "terraform.log")}
	f.tf = &demo.Terraform{
		Bin: tfBin, Dir: filepath.Join(root, "work"), CLIConfig: filepath.Join(root, "terraform.rc"), WithoutLogging: true,
		Env:    []string{"TF_LOG_PROVIDER=WARN", "TF_LOG_PATH=" + f.logPath},
		Stdout: f.out, Stderr: f.out,
	}
	if err := demo.WriteCLIConfig(f.tf.CLIConfig, providerDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(f.tf.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(f.logPath)
			t.Logf("terraform output:\n%s\nprovider log:\n%s", f.out, log)
		}
	})
	return f
}

func (f *interruptFixture) write(config string) {
	if err := os.WriteFile(filepath.Join(f.tf.Dir, "main.tf"), []byte(f.env.ProviderConfig()+config), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

func (f *interruptFixture) run(args ...string) int {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return runCLI(ctx, f.t, f.tf, args...)
}

// applyInterrupted runs terraform apply while the coordinator holds the
// first request matching route (method POST): once the coordinator has it,
// terraform gets SIGINT; the request is released once the provider logged
// the interrupt. It returns terraform's exit code.
func (f *interruptFixture) applyInterrupted(route string) int {
	t := f.t
	t.Helper()
	reached := make(chan struct{})
	var released atomic.Bool
	f.coord.InjectFault(coordinator.Fault{Method: "POST", Route: route, Kind: coordinator.FaultDelay, Delay: 2 * time.Minute,
		OnMatch: func() { close(reached) }, Until: released.Load})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	proc, err := f.tf.Start(ctx, "apply", "-auto-approve", "-no-color")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-reached:
	case <-ctx.Done():
		t.Fatal("the coordinator never received the request")
	}
	if err := proc.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(f.log(), interruptMarker) {
		if ctx.Err() != nil {
			t.Fatal("the provider never logged the interrupt")
		}
		time.Sleep(20 * time.Millisecond)
	}
	released.Store(true)
	code, err := proc.Wait()
	if err != nil {
		t.Fatalf("terraform apply: %v", err)
	}
	return code
}

func (f *interruptFixture) log() string {
	b, _ := os.ReadFile(f.logPath)
	return string(b)
}

// state returns the resources in terraform's state by address.
func (f *interruptFixture) state() map[string]*tfjson.StateResource {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := f.tf.Output(ctx, "show", "-json")
	if err != nil {
		f.t.Fatal(err)
	}
	var st tfjson.State
	if err := json.Unmarshal(out, &st); err != nil {
		f.t.Fatalf("terraform show -json: %v", err)
	}
	res := map[string]*tfjson.StateResource{}
	if st.Values != nil && st.Values.RootModule != nil {
		for _, r := range st.Values.RootModule.Resources {
			res[r.Address] = r
		}
	}
	return res
}

func TestAccInterrupt_duringCreateKeepsTheGroupInState(t *testing.T) {
	f := newInterruptFixture(t, builtProvider(t))
	p, g := acctest.RandomName("sigint-create"), "svc"
	f.write(groupHCL("test", p, g, "initial_shard_count = 3"))
	f.applyInterrupted(coordinator.RouteGroup)

	grp, ok := f.state()["redisstreamcoordinator_group.test"]
	if !ok || grp.AttributeValues["shard_count"] != float64(3) {
		t.Fatalf("after the interrupted apply the group must be in state with 3 shards, got %+v", grp)
	}
	if !strings.Contains(f.out.String(), "Create finished after the operation was interrupted") {
		t.Error("the apply must say the create was finished after the interrupt")
	}
	if strings.Contains(f.out.String(), "terraform import") {
		t.Error("the interrupted apply told the user to import its own group")
	}
	if code := f.run("plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the next plan must be empty, exit code %d", code)
	}
	if events := terraformMutations(f.coord, p, "CREATE_GROUP"); len(events) != 1 || events[0].Outcome != "SUCCESS" {
		t.Fatalf("want one create, got %+v", events)
	}
}

func TestAccInterrupt_duringScaleIsResumedByTheNextApply(t *testing.T) {
	f := newInterruptFixture(t, builtProvider(t))
	p, g := acctest.RandomName("sigint-scale"), "svc"
	dsCreateGroup(t, f.env, p, g, 4)
	f.coord.SetUndrainedShard(p, g, 3, true) // a member is slow to release: the migration runs on
	f.write(shardCountHCL("test", p, g, 4))
	if code := f.run("apply", "-auto-approve"); code != 0 {
		t.Fatalf("first apply: exit %d", code)
	}

	f.write(shardCountHCL("test", p, g, 2))
	f.applyInterrupted(coordinator.RouteStreamScale)
	if !strings.Contains(f.out.String(), "Interrupted while waiting for the resharding") {
		t.Error("the apply must say it was interrupted while the migration runs")
	}
	sc := f.state()[shardCountAddr]
	if sc == nil || sc.AttributeValues["shard_count"] != float64(2) || sc.AttributeValues["migration_state"] == "DEPRECATED" {
		t.Fatalf("after the interrupted apply the state must hold the count and the unfinished migration, got %+v", sc)
	}

	// The migration is still running: the next plan is an update that waits for it.
	if code := f.run("plan", "-out=tfplan", "-detailed-exitcode"); code != 2 {
		t.Fatalf("the plan after the interrupted scale must not be empty while the migration runs, exit code %d", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := f.tf.Output(ctx, "show", "-json", "tfplan")
	if err != nil {
		t.Fatal(err)
	}
	var plan tfjson.Plan
	if err := json.Unmarshal(out, &plan); err != nil {
		t.Fatal(err)
	}
	if err := expectUnderWayPlanned(&plan); err != nil {
		t.Fatal(err)
	}

	go drainOnceWaiting(t, f.coord, p, g, 3)
	if code := f.run("apply", "tfplan"); code != 0 {
		t.Fatalf("applying the plan: exit %d", code)
	}
	grp, err := f.env.Client().GetGroup(ctxT(t), p, g)
	if err != nil || grp.ShardCount != 2 || grp.ActiveMigration != nil {
		t.Fatalf("the apply must return only once the migration completed: %+v %v", grp, err)
	}
	if events := terraformMutations(f.coord, p, "SCALE_STREAM"); len(events) != 1 || events[0].Outcome != "SUCCESS" {
		t.Fatalf("want exactly one scale, got %+v", events)
	}
	if code := f.run("plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after the migration completed must be empty, exit code %d", code)
	}
}

// expectUnderWayPlanned: the shard count resource's planned update says the
// migration is already under way.
func expectUnderWayPlanned(plan *tfjson.Plan) error {
	for _, rc := range plan.ResourceChanges {
		if rc.Address != shardCountAddr {
			continue
		}
		after, _ := rc.Change.After.(map[string]any)
		resharding, _ := after["resharding"].(map[string]any)
		if !rc.Change.Actions.Update() || resharding["plan_check"] != planCheckUnderWay ||
			!strings.Contains(fmt.Sprint(resharding["blocked_by"]), "already under way since") {
			return fmt.Errorf("want an update whose resharding says the migration is under way, got %v %v", rc.Change.Actions, resharding)
		}
		return nil
	}
	return fmt.Errorf("no change planned for %s", shardCountAddr)
}
