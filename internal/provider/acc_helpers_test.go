package provider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// accTest bundles one acceptance test's coordinator and provider factories
// that record diagnostics.
type accTest struct {
	env   *acctest.Env
	diags *acctest.Diagnostics
}

func newAccTest(t *testing.T, opts acctest.Options) *accTest {
	t.Helper()
	return &accTest{env: acctest.New(t, opts), diags: &acctest.Diagnostics{}}
}

func (a *accTest) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return a.diags.Factories(TypeName, testServer)
}

// testServer serves a fresh provider as main.go does.
func testServer() tfprotov6.ProviderServer { return NewProtocol6(newTestProvider())() }

// groupHCL is a redisstreamcoordinator_group block; extra lines go inside it.
func groupHCL(name, p, g string, extra ...string) string {
	return fmt.Sprintf(`
resource "redisstreamcoordinator_group" %q {
  stream_prefix  = %q
  consumer_group = %q
  %s
}
`, name, p, g, strings.Join(extra, "\n  "))
}

// shardCountHCL is a redisstreamcoordinator_group_shard_count block.
func shardCountHCL(name, p, g string, count int, extra ...string) string {
	return fmt.Sprintf(`
resource "redisstreamcoordinator_group_shard_count" %q {
  stream_prefix  = %q
  consumer_group = %q
  shard_count    = %d
  %s
}
`, name, p, g, count, strings.Join(extra, "\n  "))
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// createGroupOutOfBand creates a group as another actor would.
func (a *accTest) createGroupOutOfBand(t *testing.T, p, g string, shards int32) {
	t.Helper()
	dsCreateGroup(t, a.env, p, g, shards)
}

// createConsumedGroupOutOfBand creates a group as another actor would and
// starts a consumer in it, so a scale-out can complete.
func (a *accTest) createConsumedGroupOutOfBand(t *testing.T, p, g string, shards int32) {
	t.Helper()
	a.createGroupOutOfBand(t, p, g, shards)
	a.env.StartConsumer(t, p, g)
	waitForLiveMember(t, a, p, g)
}

func (a *accTest) group(t *testing.T, p, g string) (*client.Group, error) {
	t.Helper()
	return a.env.Client().GetGroup(ctxT(t), p, g)
}

// expectGroup is a step check on the coordinator's own record of a group.
func (a *accTest) expectGroup(p, g string, check func(*client.Group) error) func(*terraform.State) error {
	return func(*terraform.State) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		grp, err := a.env.Client().GetGroup(ctx, p, g)
		if err != nil {
			return fmt.Errorf("reading %s/%s from the coordinator: %w", p, g, err)
		}
		return check(grp)
	}
}

func shardCountIs(n int32) func(*client.Group) error {
	return func(g *client.Group) error {
		if g.ShardCount != n {
			return fmt.Errorf("group %s/%s has %d shards on the coordinator, want %d", g.StreamPrefix, g.ConsumerGroup, g.ShardCount, n)
		}
		return nil
	}
}

// auditEvents returns the coordinator's audit events for one prefix (in-repo
// only), optionally only those of the given actions, in order.
func auditEvents(c *coordinator.Coordinator, p string, actions ...string) []coordinator.AuditEvent {
	var out []coordinator.AuditEvent
	for _, e := range c.AuditEvents() {
		if e.StreamPrefix == p && (len(actions) == 0 || slices.Contains(actions, e.Action)) {
			out = append(out, e)
		}
	}
	return out
}

// terraformMutations are the audit events of prefix p (of the given
// actions, or all) that the tests' own out-of-band changes did not send.
func terraformMutations(c *coordinator.Coordinator, p string, actions ...string) []coordinator.AuditEvent {
	var out []coordinator.AuditEvent
	for _, e := range auditEvents(c, p, actions...) {
		if deref(e.RequestedBy) != outOfBandMutation().RequestedBy {
			out = append(out, e)
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// waitForLiveMember blocks until the group reports a live member.
func waitForLiveMember(t *testing.T, a *accTest, p, g string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		members, err := a.env.Client().Members(ctxT(t), p, g)
		if err == nil {
			for _, m := range members {
				if m.Live(time.Now()) {
					return
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no live member in %s/%s after 20s", p, g)
}

// providerConfigUnknownAtPlan is a provider block whose endpoint is known only
// once a terraform_data resource exists, so that the plan cannot read the
// coordinator and the apply can.
func (a *accTest) providerConfigUnknownAtPlan() string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    redisstreamcoordinator = { source = %q }
  }
}
# The endpoint is only known once this resource exists.
resource "terraform_data" "endpoint" {
  input = %q
}
provider "redisstreamcoordinator" {
  endpoint = terraform_data.endpoint.output
  username = %q
  password = %q
}
`, acctest.ProviderSource, a.env.Endpoint, a.env.Writer.Username, a.env.Writer.Password)
}

// waitForGroup polls the group until it satisfies ok (a coordinator-side
// change the test cannot be told of otherwise).
func waitForGroup(t *testing.T, a *accTest, p, g string, ok func(*client.Group) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if grp, err := a.group(t, p, g); err == nil && ok(grp) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("group %s/%s never reached the expected state", p, g)
}
