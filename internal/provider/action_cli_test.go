package provider

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

const (
	rollbackActionExample = "actions/redisstreamcoordinator_rollback_migration/action.tf"
	deleteActionExample   = "actions/redisstreamcoordinator_delete_group/action.tf"
	// actionsCLIRunID makes the request ids of the CLI tests predictable.
	actionsCLIRunID = "actions-cli"
)

func init() {
	examplesTestedElsewhere[rollbackActionExample] = "TestAccActionsCLI_RollbackMigration"
	examplesTestedElsewhere[deleteActionExample] = "TestAccActionsCLI_DeleteGroup"
}

// actionsVersionChecks gate tests of actions (action blocks, -invoke,
// action_trigger): Terraform 1.14 introduced them. OpenTofu (which reports
// its own version, 1.12 today) has none.
var actionsVersionChecks = []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)}

// skipUnlessActions skips a test of actions unless it is an acceptance test
// run by Terraform 1.14 or later; OpenTofu has no actions.
func skipUnlessActions(t *testing.T) string {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	if tofu, err := acctest.IsOpenTofu(tfBin); err != nil {
		t.Fatal(err)
	} else if tofu {
		t.Skip("OpenTofu has no actions (action blocks, -invoke, action_trigger): they are a Terraform 1.14 feature")
	}
	skipUnlessTerraform(t, tfBin, actionsVersionChecks...)
	return tfBin
}

// actionCLI runs an action example through the terraform CLI with the
// built provider, as a principal chosen per command.
type actionCLI struct {
	t   *testing.T
	env *acctest.Env
	tf  *demo.Terraform
}

func newActionCLI(t *testing.T, env *acctest.Env, cfg string) *actionCLI {
	t.Helper()
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	tf, _ := cliTerraform(t, tfBin)
	if err := os.MkdirAll(tf.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	a := &actionCLI{t: t, env: env, tf: tf}
	a.write(cfg)
	return a
}

func (a *actionCLI) write(cfg string) {
	a.t.Helper()
	if err := os.WriteFile(filepath.Join(a.tf.Dir, "main.tf"), []byte(cfg), 0o600); err != nil {
		a.t.Fatal(err)
	}
}

// run runs terraform as creds and returns its exit code and output.
func (a *actionCLI) run(creds acctest.Credentials, args ...string) (int, string) {
	a.t.Helper()
	a.tf.Env = []string{
		"REDIS_STREAM_COORDINATOR_ENDPOINT=" + a.env.Endpoint,
		"REDIS_STREAM_COORDINATOR_USERNAME=" + creds.Username,
		"REDIS_STREAM_COORDINATOR_PASSWORD=" + creds.Password,
		"REDIS_STREAM_COORDINATOR_RUN_ID=" + actionsCLIRunID,
		"REDIS_STREAM_COORDINATOR_RETRY_WAIT_MIN=50ms",
		"REDIS_STREAM_COORDINATOR_RETRY_WAIT_MAX=500ms",
	}
	var out strings.Builder
	log := a.tf.Stdout
	// One writer for both, so os/exec never writes to it from two goroutines.
	w := io.MultiWriter(log, &out)
	a.tf.Stdout, a.tf.Stderr = w, w
	defer func() { a.tf.Stdout, a.tf.Stderr = log, log }()
	ctx := ctxTimeout(a.t, 3*time.Minute)
	// The flags go before the arguments: a saved plan file must come last.
	code, err := a.tf.Run(ctx, append([]string{args[0], "-no-color", "-input=false"}, args[1:]...)...)
	if err != nil {
		a.t.Fatalf("terraform %s: %v", args[0], err)
	}
	// Terraform wraps diagnostics to the terminal width: compare words.
	return code, strings.Join(strings.Fields(out.String()), " ")
}

// expectOutput fails the test unless out matches every pattern.
func expectOutput(t *testing.T, what, out string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(out) {
			t.Errorf("%s: output does not match %q:\n%s", what, p, out)
		}
	}
}

// TestAccActionsCLI_RollbackMigration runs the rollback example as the
// guide does: a READ principal plans it with -invoke (the plan names each
// migration it will roll back, and nothing changes), a READ principal's
// invocation is refused, the WRITE principal's rolls back both groups of the
// prefix, audited, and a second invocation succeeds without sending anything.
func TestAccActionsCLI_RollbackMigration(t *testing.T) {
	skipUnlessActions(t)
	t.Parallel()
	env := acctest.New(t, acctest.Options{})
	c := env.RequireInRepo(t, "the example's fixed names (orders/...) would collide on a shared coordinator")
	cli := newActionCLI(t, env, exampleConfig(t, env, []string{rollbackActionExample}, exampleRewrite{provider: providerAsWritten}))

	for _, g := range []string{"order-service", "order-analytics"} {
		dsCreateGroup(t, env, "orders", g, 8)
	}
	dsScaleOutOfBand(t, env, "orders", 12) // no consumers: both migrations stay ACTIVE
	audited := len(c.AuditEvents())
	const invoke = "-invoke=action.redisstreamcoordinator_rollback_migration.orders"

	code, out := cli.run(env.Reader, "plan", invoke)
	if code != 0 {
		t.Fatalf("terraform plan %s as the READ principal exited %d:\n%s", invoke, code, out)
	}
	expectOutput(t, "plan -invoke", out,
		`Warning: The invocation will roll back 2 migration\(s\) of stream prefix "orders"`,
		`group "order-analytics": migration reshard-\S+, 8→12 shards, ACTIVE since \d{4}-\d\d-\d\dT[\d:]+Z: back to 8 shards`,
		`group "order-service": migration reshard-\S+, 8→12 shards, ACTIVE since`,
		`orders:8\.\.orders:11\) are stranded`,
		`audited with requestedBy "terraform:streams"`,
		`Terraform will invoke the following action\(s\)`,
		`action\.redisstreamcoordinator_rollback_migration\.orders`,
	)
	if n := len(c.AuditEvents()); n != audited {
		t.Fatalf("planning the invocation sent %d audited request(s), want none", n-audited)
	}

	code, out = cli.run(env.Reader, "apply", "-auto-approve", invoke)
	if code == 0 {
		t.Fatalf("invoking as the READ principal succeeded:\n%s", out)
	}
	expectOutput(t, "apply -invoke as READ", out,
		`Failed to roll back migration reshard-\S+ of group "order-analytics" under stream prefix "orders"`,
		`answered 403`, `lacks the WRITE role`, `Request id: terraform-actions-cli-rollback-migration-[0-9a-f]{8}`,
		`Nothing was rolled back`)
	refused := auditEvents(c, "orders", coordinator.ActionRollbackMigration)
	if len(refused) != 1 || refused[0].Outcome != coordinator.OutcomeForbidden || refused[0].Principal != env.Reader.Username {
		t.Fatalf("audit after the READ invocation: %+v, want one FORBIDDEN rollback by %s", refused, env.Reader.Username)
	}

	code, out = cli.run(env.Writer, "apply", "-auto-approve", invoke)
	if code != 0 {
		t.Fatalf("invoking as the WRITE principal exited %d:\n%s", code, out)
	}
	expectOutput(t, "apply -invoke as WRITE", out,
		`Rolling back migration reshard-\S+ of group "order-analytics" \(8→12 shards, ACTIVE since [^)]+\); request id terraform-actions-cli-rollback-migration-`,
		`Migration reshard-\S+ of group "order-service" is ROLLED_BACK \(since [^)]+\); the group has 8 shards again`,
		`Rolled back stream prefix "orders"`,
		`are stranded`)
	expectAuditedAction(t, c, "orders", coordinator.ActionRollbackMigration, env.Writer.Username, 2,
		"terraform:streams", "INC-4711: the scale-out to 12 shards overloads the order database; roll back while allowed")
	for _, g := range []string{"order-service", "order-analytics"} {
		grp, err := env.Client().GetGroup(ctxT(t), "orders", g)
		if err != nil || grp.ShardCount != 8 || grp.ActiveMigration != nil {
			t.Fatalf("orders/%s after the rollback: %+v, %v; want 8 shards and no active migration", g, grp, err)
		}
	}

	// Idempotent: invoking again finds the rollback done and sends nothing.
	audited = len(c.AuditEvents())
	code, out = cli.run(env.Writer, "apply", "-auto-approve", invoke)
	if code != 0 {
		t.Fatalf("invoking again exited %d:\n%s", code, out)
	}
	expectOutput(t, "second apply -invoke", out, `Nothing to send: the resharding of stream prefix "orders" is already rolled back`)
	if n := len(c.AuditEvents()); n != audited {
		t.Errorf("the second invocation sent %d audited request(s), want none", n-audited)
	}
}

// TestAccActionsCLI_DeleteGroup runs the delete example: the plan with
// -invoke shows the group and that its live consumer makes the coordinator
// refuse; the invocation is refused with the live member named, as the
// group resource's destroy is; with force = true it deletes, audited; a
// second invocation finds the group gone and succeeds.
func TestAccActionsCLI_DeleteGroup(t *testing.T) {
	skipUnlessActions(t)
	t.Parallel()
	// The lease outlasts the test, so the member is live however slow the machine.
	env := acctest.New(t, acctest.Options{MemberLeaseTTL: time.Hour})
	c := env.RequireInRepo(t, "the example's fixed names (payments/...) would collide on a shared coordinator")
	example := exampleConfig(t, env, []string{deleteActionExample}, exampleRewrite{provider: providerAsWritten})
	cli := newActionCLI(t, env, example)

	dsCreateGroup(t, env, "payments", "payment-service", 6)
	member := env.JoinSilentMember(t, "payments", "payment-service")
	const invoke = "-invoke=action.redisstreamcoordinator_delete_group.old_payments"
	audited := len(c.AuditEvents())

	code, out := cli.run(env.Reader, "plan", invoke)
	if code != 0 {
		t.Fatalf("terraform plan %s exited %d:\n%s", invoke, code, out)
	}
	expectOutput(t, "plan -invoke", out,
		`Warning: The invocation will be refused: group "payment-service" under stream prefix "payments" has live consumers`,
		`Group: 6 shards, state \w+, metadataVersion \d+`,
		`Live members: `+regexp.QuoteMeta(member),
		`409 GROUP_HAS_ACTIVE_MEMBERS`, `set force = true`)
	if n := len(c.AuditEvents()); n != audited {
		t.Fatalf("planning the invocation sent %d audited request(s), want none", n-audited)
	}

	code, out = cli.run(env.Writer, "apply", "-auto-approve", invoke)
	if code == 0 {
		t.Fatalf("deleting a group with a live consumer succeeded:\n%s", out)
	}
	expectOutput(t, "apply -invoke with a live consumer", out,
		`Group "payment-service" under stream prefix "payments" still has live consumers`,
		`answered 409 CONFLICT with errorCode GROUP_HAS_ACTIVE_MEMBERS`,
		`Live members: `+regexp.QuoteMeta(member),
		`set force = true in the action's config`, `Nothing was deleted`)

	cli.write(strings.Replace(example, `consumer_group = "payment-service"`, "consumer_group = \"payment-service\"\n    force = true", 1))
	code, out = cli.run(env.Reader, "plan", invoke)
	if code != 0 {
		t.Fatalf("terraform plan %s with force exited %d:\n%s", invoke, code, out)
	}
	expectOutput(t, "plan -invoke with force", out,
		`Warning: The invocation will delete group "payment-service" under stream prefix "payments"`,
		`Will send DELETE /coord/v1/streams/payments/groups/payment-service with force = true`,
		`Live members, which fail their next heartbeat: `+regexp.QuoteMeta(member))
	code, out = cli.run(env.Writer, "apply", "-auto-approve", invoke)
	if code != 0 {
		t.Fatalf("invoking with force exited %d:\n%s", code, out)
	}
	expectOutput(t, "apply -invoke with force", out,
		`Deleting group "payment-service" under stream prefix "payments" \(6 shards, [^)]*\) with force = true; request id terraform-actions-cli-delete-group-`,
		`Deleted group "payment-service" under stream prefix "payments"`)
	events := auditEvents(c, "payments", coordinator.ActionDeleteGroup)
	if len(events) != 2 || events[0].Status != 409 || events[1].Outcome != coordinator.OutcomeSuccess {
		t.Fatalf("delete audit events: %+v, want a refused (409) and a successful delete", events)
	}
	expectAuditedAction(t, c, "payments", coordinator.ActionDeleteGroup, env.Writer.Username, 2,
		"terraform:streams", "PLAT-1301: payment-service moved to payments-v2; the old group is no longer read")

	audited = len(c.AuditEvents())
	code, out = cli.run(env.Writer, "apply", "-auto-approve", invoke)
	if code != 0 {
		t.Fatalf("invoking again exited %d:\n%s", code, out)
	}
	expectOutput(t, "second apply -invoke", out, `Group "payment-service" under stream prefix "payments" does not exist \(404\): already deleted, nothing to send`)
	if n := len(c.AuditEvents()); n != audited {
		t.Errorf("the second invocation sent %d audited request(s), want none", n-audited)
	}
	code, out = cli.run(env.Reader, "plan", invoke)
	if code != 0 {
		t.Fatalf("terraform plan %s after the delete exited %d:\n%s", invoke, code, out)
	}
	expectOutput(t, "plan -invoke after the delete", out, `The invocation will change nothing: group "payment-service" under stream prefix "payments" does not exist`)
}

// expectAuditedAction checks the audit events of one action on prefix p
// sent by principal: want of them, each with the action's requestedBy and
// reason and a request id of its own from the provider.
func expectAuditedAction(t *testing.T, c *coordinator.Coordinator, p, action, principal string, want int, requestedBy, reason string) {
	t.Helper()
	var events []coordinator.AuditEvent
	for _, e := range auditEvents(c, p, action) {
		if e.Principal == principal {
			events = append(events, e)
		}
	}
	if len(events) != want {
		t.Fatalf("%d %s audit event(s) on %s, want %d: %+v", len(events), action, p, want, events)
	}
	ids := map[string]bool{}
	for _, e := range events {
		if deref(e.RequestedBy) != requestedBy || deref(e.Reason) != reason ||
			!strings.HasPrefix(e.RequestID, "terraform-") || ids[e.RequestID] {
			t.Errorf("%s audit event by %s: requestedBy %q, reason %q, request id %q; want %q, %q and a fresh terraform-… id",
				action, principal, deref(e.RequestedBy), deref(e.Reason), e.RequestID, requestedBy, reason)
		}
		ids[e.RequestID] = true
	}
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
