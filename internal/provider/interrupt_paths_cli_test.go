package provider

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// Nothing new is sent after an interrupt, on any path (issue 24 §4): an
// interrupt finishes or reads back what was already sent. Each test loses
// the answer to a mutation the coordinator did not apply (a proxy's 502), and
// interrupts terraform at that moment: the read-back shows nothing happened,
// which without an interrupt means "send it again". After the interrupt the
// coordinator's request log must show no second send, nor any other mutation.

// notApplied is a proxy's 502 to a matching mutation, which the
// coordinator never sees: nothing is applied.
func notApplied(method, route string) coordinator.Fault {
	return coordinator.Fault{Method: method, Route: route, Kind: coordinator.FaultRespond, Status: http.StatusBadGateway,
		Body: gatewayHTML(http.StatusBadGateway), ContentType: "text/html"}
}

// applyInterruptedAt runs terraform apply and interrupts it when the
// coordinator takes fault: at that moment terraform gets SIGINT, and the
// fault applies once the provider has logged the interrupt. It returns
// terraform's exit code.
func (f *interruptFixture) applyInterruptedAt(fault coordinator.Fault, args ...string) int {
	t := f.t
	t.Helper()
	code, noticed := f.applyInterruptedAtMaybeUnnoticed(fault, args...)
	if !noticed {
		t.Fatal("the provider never logged the interrupt: the fault was not reached")
	}
	return code
}

// applyInterruptedAtMaybeUnnoticed is applyInterruptedAt for an operation
// Terraform may end without waiting for the provider to hear of the
// interrupt: Terraform 1.16 stops reading an action's event stream on the
// interrupt and ends the provider while its StopProvider call is still in
// flight, so the provider's log line can be lost with it. The fault is
// released when the provider logged the interrupt or terraform exited;
// noticed says which.
func (f *interruptFixture) applyInterruptedAtMaybeUnnoticed(fault coordinator.Fault, args ...string) (code int, noticed bool) {
	t := f.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	started := make(chan *demo.Started, 1)
	exited := make(chan struct{})
	fault.OnMatch = func() {
		proc := <-started
		if err := proc.Signal(os.Interrupt); err != nil {
			t.Error(err)
			return
		}
		for !strings.Contains(f.log(), interruptMarker) && ctx.Err() == nil {
			select {
			case <-exited:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	f.coord.InjectFault(fault)
	proc, err := f.tf.Start(ctx, append([]string{"apply", "-auto-approve", "-no-color"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	started <- proc
	code, err = proc.Wait()
	close(exited)
	if err != nil {
		t.Fatalf("terraform apply: %v", err)
	}
	return code, strings.Contains(f.log(), interruptMarker)
}

// sentOnce fails unless the coordinator received exactly one request for
// method and route.
func (f *interruptFixture) sentOnce(method, route string) {
	f.t.Helper()
	if n := f.coord.RequestCount(method, route); n != 1 {
		f.t.Errorf("%s %s reached the coordinator %d times, want 1: nothing may be sent after the interrupt", method, route, n)
	}
}

func (f *interruptFixture) outputSays(fragments ...string) {
	f.t.Helper()
	out := strings.Join(strings.Fields(f.out.String()), " ")
	for _, s := range fragments {
		if !strings.Contains(out, s) {
			f.t.Errorf("terraform's output does not say %q", s)
		}
	}
}

func TestAccInterrupt_lostStreamScaleIsNotSentAgain(t *testing.T) {
	f := newInterruptFixture(t, builtProvider(t))
	p, g := acctest.RandomName("sigint-rescale"), "svc"
	dsCreateGroup(t, f.env, p, g, 4)
	f.write(shardCountHCL("test", p, g, 4))
	if code := f.run("apply", "-auto-approve"); code != 0 {
		t.Fatalf("first apply: exit %d", code)
	}
	f.write(shardCountHCL("test", p, g, 2))
	f.coord.ResetRequestCounts()
	if code := f.applyInterruptedAt(notApplied(http.MethodPost, coordinator.RouteStreamScale)); code == 0 {
		t.Fatal("the interrupted apply succeeded")
	}
	f.sentOnce(http.MethodPost, coordinator.RouteStreamScale)
	f.outputSays("was sent, and its answer was lost", "was not sent again", "Nothing was changed on the coordinator",
		"The next plan shows the same scale again")
	if grp, err := f.env.Client().GetGroup(ctxT(t), p, g); err != nil || grp.ShardCount != 4 || grp.ActiveMigration != nil {
		t.Fatalf("the group must be unchanged: %+v %v", grp, err)
	}
	if code := f.run("plan", "-detailed-exitcode"); code != 2 {
		t.Fatalf("the next plan must show the scale again, exit code %d", code)
	}
}

func TestAccInterrupt_lostRollbackOnRevertSendsNothingMore(t *testing.T) {
	f := newInterruptFixture(t, builtProvider(t))
	p := acctest.RandomName("sigint-revert")
	dsCreateGroup(t, f.env, p, "a", 3)
	dsCreateGroup(t, f.env, p, "b", 3)
	dsScaleOutOfBand(t, f.env, p, 6)
	f.write(shardCountHCL("test", p, "a", 3, "rollback_on_revert = true"))
	f.coord.ResetRequestCounts()
	if code := f.applyInterruptedAt(notApplied(http.MethodPost, coordinator.RouteRollback)); code == 0 {
		t.Fatal("the interrupted apply succeeded")
	}
	// The first rollback only: neither sent again nor followed by the other group's.
	f.sentOnce(http.MethodPost, coordinator.RouteRollback)
	if rolled := terraformMutations(f.coord, p, "ROLLBACK_MIGRATION"); len(rolled) != 0 {
		t.Fatalf("no rollback reached the coordinator, yet it audited %+v", rolled)
	}
}

func TestAccInterrupt_lostDeleteIsNotSentAgain(t *testing.T) {
	f := newInterruptFixture(t, builtProvider(t))
	p, g := acctest.RandomName("sigint-delete"), "svc"
	f.write(groupHCL("test", p, g, "initial_shard_count = 2", `deletion_policy = "DELETE"`))
	if code := f.run("apply", "-auto-approve"); code != 0 {
		t.Fatalf("first apply: exit %d", code)
	}
	f.write("")
	f.coord.ResetRequestCounts()
	if code := f.applyInterruptedAt(notApplied(http.MethodDelete, coordinator.RouteGroup)); code == 0 {
		t.Fatal("the interrupted apply succeeded")
	}
	f.sentOnce(http.MethodDelete, coordinator.RouteGroup)
	f.outputSays("was not sent again", "The group was not deleted")
	if _, err := f.env.Client().GetGroup(ctxT(t), p, g); err != nil {
		t.Fatalf("the group must still exist: %v", err)
	}
	if _, ok := f.state()["redisstreamcoordinator_group.test"]; !ok {
		t.Fatal("the group that was not deleted must stay in state")
	}
}

func TestAccInterrupt_lostCreateIsNotSentAgain(t *testing.T) {
	f := newInterruptFixture(t, builtProvider(t))
	p, g := acctest.RandomName("sigint-recreate"), "svc"
	f.write(groupHCL("test", p, g, "initial_shard_count = 2"))
	f.coord.ResetRequestCounts()
	if code := f.applyInterruptedAt(notApplied(http.MethodPost, coordinator.RouteGroup)); code == 0 {
		t.Fatal("the interrupted apply succeeded")
	}
	f.sentOnce(http.MethodPost, coordinator.RouteGroup)
	if _, err := f.env.Client().GetGroup(ctxT(t), p, g); err == nil {
		t.Fatal("the create was not applied, yet the group exists")
	}
}

// TestAccInterrupt_partWayStreamScaleIsNotTakenOver: the stream scale
// reaches the coordinator as terraform is interrupted, and fails part-way
// (503 REDIS_STREAM_PROVISIONING_FAILED: group "a" scaled, "b" PREPARING,
// "c" untouched). Without an interrupt the provider retries it and takes the
// prefix over with per-group scales; after one, it sends nothing more: no
// retry, no per-group scale. The next plan and apply repair the prefix.
func TestAccInterrupt_partWayStreamScaleIsNotTakenOver(t *testing.T) {
	f := newInterruptFixture(t, builtProvider(t))
	p := acctest.RandomName("sigint-partial")
	for _, g := range []string{"a", "b", "c"} {
		dsCreateGroup(t, f.env, p, g, 2)
	}
	f.coord.FailStreamScaleAt(p, 1)
	f.coord.SetUndrainedShard(p, "a", 1, true)
	f.write(shardCountHCL("test", p, "a", 1))
	f.coord.ResetRequestCounts()
	reached := coordinator.Fault{Method: http.MethodPost, Route: coordinator.RouteStreamScale, Kind: coordinator.FaultDelay,
		Delay: time.Minute, Until: func() bool { return true }}
	if code := f.applyInterruptedAt(reached); code == 0 {
		t.Fatal("the interrupted apply succeeded")
	}
	f.sentOnce(http.MethodPost, coordinator.RouteStreamScale)
	if n := f.coord.RequestCount(http.MethodPost, coordinator.RouteGroupScale); n != 0 {
		t.Fatalf("%d per-group scales were sent after the interrupt", n)
	}
	// Issue 30 §1: the prefix is left split (a under way to 1, b PREPARING
	// to 1, c at 2). The next plan shows the change, and its apply brings
	// every group to 1: it adopts a's migration, resumes b's with the same
	// target and scales c, one by one (a stream scale is refused while a
	// migration is under way). Then the plan is empty.
	f.coord.SetUndrainedShard(p, "a", 1, false)
	if code := f.run("plan", "-detailed-exitcode", "-no-color"); code != 2 {
		t.Fatalf("the plan after the part-way scale exited %d, want 2 (changes)", code)
	}
	if code := f.run("apply", "-auto-approve", "-no-color"); code != 0 {
		t.Fatalf("the apply that repairs the prefix exited %d", code)
	}
	for _, g := range []string{"a", "b", "c"} {
		grp, err := f.env.Client().GetGroup(ctxT(t), p, g)
		if err != nil {
			t.Fatal(err)
		}
		if grp.ShardCount != 1 || !grp.ActiveMigration.Finished() {
			t.Fatalf("group %s after the repair: %d shards, migration %+v; want 1 and none", g, grp.ShardCount, grp.ActiveMigration)
		}
	}
	if code := f.run("plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Fatalf("the plan after the repair exited %d, want 0 (no changes)", code)
	}
}

// TestAccInterrupt_lostPerGroupScaleOfTakeOverSendsNothingMore: the apply
// takes over a prefix whose group "a" is already migrating to the target,
// scaling "b" and "c" one by one. The answer to b's scale is lost (not
// applied) as terraform is interrupted: b's scale is not sent again, and c's
// is not sent at all.
func TestAccInterrupt_lostPerGroupScaleOfTakeOverSendsNothingMore(t *testing.T) {
	f := newInterruptFixture(t, builtProvider(t))
	p := acctest.RandomName("sigint-takeover")
	for _, g := range []string{"a", "b", "c"} {
		dsCreateGroup(t, f.env, p, g, 2)
	}
	f.coord.SetUndrainedShard(p, "a", 1, true) // a's migration stays under way
	if _, err := f.env.Client().ScaleGroup(ctxT(t), p, "a", 1, outOfBandMutation()); err != nil {
		t.Fatal(err)
	}
	f.write(shardCountHCL("test", p, "a", 1))
	f.coord.ResetRequestCounts()
	if code := f.applyInterruptedAt(notApplied(http.MethodPost, coordinator.RouteGroupScale)); code == 0 {
		t.Fatal("the interrupted apply succeeded")
	}
	f.sentOnce(http.MethodPost, coordinator.RouteGroupScale)
	f.outputSays("was sent and its answer was lost", "it was not sent again")
	if scaled := terraformMutations(f.coord, p, "SCALE_GROUP"); len(scaled) != 0 {
		t.Fatalf("no per-group scale of terraform's reached the coordinator, yet it audited %+v", scaled)
	}
}

// TestAccInterrupt_lostDeleteOfTheActionIsNotSentAgain: the delete_group
// action's delete loses its answer (not applied) as terraform is
// interrupted: it is read back and not sent again.
func TestAccInterrupt_lostDeleteOfTheActionIsNotSentAgain(t *testing.T) {
	skipUnlessActions(t)
	f := newInterruptFixture(t, builtProvider(t))
	p, g := acctest.RandomName("sigint-action"), "svc"
	dsCreateGroup(t, f.env, p, g, 2)
	f.write(fmt.Sprintf(`
action "redisstreamcoordinator_delete_group" "old" {
  config {
    stream_prefix  = %q
    consumer_group = %q
    reason         = "interrupt test"
  }
}
`, p, g))
	f.coord.ResetRequestCounts()
	// Terraform 1.16 ends an interrupted -invoke without showing the
	// action's diagnostics (exit 0), and may end the provider before it
	// hears of the interrupt: the coordinator's log is the evidence. Either
	// way the delete reaches the coordinator once.
	if _, noticed := f.applyInterruptedAtMaybeUnnoticed(notApplied(http.MethodDelete, coordinator.RouteGroup), "-invoke=action.redisstreamcoordinator_delete_group.old"); !noticed {
		t.Log("terraform ended the provider before it logged the interrupt; the coordinator's log still shows one delete")
	}
	f.sentOnce(http.MethodDelete, coordinator.RouteGroup)
	if _, err := f.env.Client().GetGroup(ctxT(t), p, g); err != nil {
		t.Fatalf("the group must still exist: %v", err)
	}
}

// TestAccInterrupt_createAfterItsPrefixScaledSendsNoPerGroupScale: a new
// group created after its prefix's stream scale in the same apply is created
// at the prefix's new count and sends no scale of its own. When terraform is
// interrupted while the create is in flight, the create is finished within
// the grace period, at that count: the group is in state, not tainted, the
// prefix is at one count and the next plan is empty.
func TestAccInterrupt_createAfterItsPrefixScaledSendsNoPerGroupScale(t *testing.T) {
	f := newInterruptFixture(t, builtProvider(t))
	p := acctest.RandomName("sigint-rescale-create")
	base := groupHCL("anchor", p, "g1", "initial_shard_count = 4")
	count := func(n int) string {
		return shardCountHCL("count", p, "g1", n, "depends_on = [redisstreamcoordinator_group.anchor]")
	}
	f.write(base + count(4))
	if code := f.run("apply", "-auto-approve"); code != 0 {
		t.Fatalf("first apply: exit %d", code)
	}
	// g2 depends on the shard count: created after the scale to 2.
	f.write(base + count(2) + groupHCL("new", p, "g2", "depends_on = [redisstreamcoordinator_group_shard_count.count]"))
	f.coord.ResetRequestCounts()
	if code := f.applyInterrupted(coordinator.RouteGroup); code == 0 {
		t.Fatal("the interrupted apply succeeded")
	}
	if n := f.coord.RequestCount(http.MethodPost, coordinator.RouteGroupScale); n != 0 {
		t.Fatalf("a per-group scale reached the coordinator %d times, want 0", n)
	}
	f.outputSays("Create finished after the operation was interrupted")
	grp, ok := f.state()["redisstreamcoordinator_group.new"]
	if !ok || grp.Tainted {
		t.Fatalf("the group created during the interrupt must be in state, not tainted: %+v", grp)
	}
	for _, g := range []string{"g1", "g2"} {
		if grp, err := f.env.Client().GetGroup(ctxT(t), p, g); err != nil || grp.ShardCount != 2 {
			t.Fatalf("group %s after the interrupted apply: %+v %v (want 2 shards)", g, grp, err)
		}
	}
	if code := f.run("plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan after it must be empty, exit code %d", code)
	}
}
