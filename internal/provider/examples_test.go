package provider

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// exampleCase is how one example (or a combination of example files) is
// exercised against the in-repo coordinator. Every file under examples/
// must belong to some case: TestExamplesAreAllTested fails otherwise, so
// no example is left untested by accident.
//
// Examples are applied, followed by the harness's empty-plan check:
//
//	example                         | tested by            | why
//	--------------------------------+----------------------+-------------------------------
//	every example                   | apply + empty plan   | the in-repo coordinator gives
//	                                |                      | all the examples assume
//	health-check/main.tf            | apply, plan not      | its check block's data source
//	                                | required to be empty | is re-read on every plan
//	guides/migrate-from-stream-     | apply via terraform  | terraform-plugin-testing
//	group-module/*                  | CLI (dev overrides)  | refuses state with modules
type exampleCase struct {
	name  string
	files []string // under examples/, combined into one configuration
	rw    exampleRewrite
	// setup creates what the example assumes but does not create itself.
	setup func(t *testing.T, env *acctest.Env)
	// consumer runs a consumer of orders/order-service (joining once the
	// group exists) and holds scale requests until it has joined, so a
	// scale-out completes: in production consumers run before a scale.
	consumer bool
	// vars supplies the example's input variables.
	vars func(t *testing.T, env *acctest.Env) config.Variables
	// prior, when set, is applied first: the state the example starts from.
	prior     []string
	priorVars func(t *testing.T, env *acctest.Env) config.Variables
	// probe is extra configuration that makes a provider-only example do
	// something: a read and a write through the configured provider.
	probe       bool
	planChecks  []plancheck.PlanCheck
	stateChecks []statecheck.StateCheck
	// noMutations asserts the coordinator audited no mutation while the
	// example was applied (adoption must be read-only).
	noMutations bool
	// importScript is an import.sh whose commands run as `terraform import`
	// steps after the apply.
	importScript string
	// nonEmptyPlan, when set, is why the plan after apply is not empty.
	nonEmptyPlan string
	// viaCLI, when set, is why the case runs through the terraform CLI like
	// cases with modules (e.g. for_each instances, whose string keys
	// terraform-plugin-testing's state shim refuses).
	viaCLI string
}

const providerProbeHCL = `
# ---- probe added by the examples test: a read and a write through the provider above
data "redisstreamcoordinator_health" "probe" {}

resource "redisstreamcoordinator_group" "probe" {
  stream_prefix       = "provider-example"
  consumer_group      = "probe"
  initial_shard_count = 1
  deletion_policy     = "DELETE"
}
`

// The examples' shared fixture: the order service's group.
const (
	ordersPrefix = "orders"
	ordersGroup  = "order-service"
)

func exampleCases() []exampleCase {
	groupDir := "resources/redisstreamcoordinator_group/"
	countDir := "resources/redisstreamcoordinator_group_shard_count/"
	cases := []exampleCase{
		{
			name: "provider", files: []string{"provider/provider.tf"},
			rw: exampleRewrite{provider: repointProvider}, probe: true,
		},
		{
			name: "provider_token", files: []string{"provider/auth-token.tf"},
			rw: exampleRewrite{provider: repointProvider}, probe: true,
			vars: func(t *testing.T, env *acctest.Env) config.Variables {
				login, err := env.Client().Login(ctxT(t), env.Writer.Username, env.Writer.Password)
				if err != nil {
					t.Fatalf("login: %v", err)
				}
				return config.Variables{"coordinator_token": config.StringVariable(login.AccessToken)}
			},
		},
		{
			name: "provider_tls_private_ca", files: []string{"provider/tls-private-ca.tf"},
			rw: exampleRewrite{provider: repointProvider}, probe: true,
			vars: func(t *testing.T, _ *acctest.Env) config.Variables {
				return config.Variables{"coordinator_ca_pem": config.StringVariable(testCAPEM(t))}
			},
		},
		{
			name: "group", files: []string{groupDir + "resource.tf"}, importScript: groupDir + "import.sh",
			stateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("redisstreamcoordinator_group.orders_analytics", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(8)),
				statecheck.ExpectKnownOutputValue("orders_stream_key_pattern", knownvalue.StringExact("orders:{shardIndex}")),
			},
		},
		{
			name: "group_import_block", files: []string{groupDir + "resource.tf", groupDir + "import-by-string-id.tf"},
			setup:      func(t *testing.T, env *acctest.Env) { createExampleGroup(t, env, ordersPrefix, ordersGroup, 8) },
			planChecks: []plancheck.PlanCheck{expectImported("redisstreamcoordinator_group.orders")},
		},
		{
			// The example scales a running group: its consumer has joined.
			name: "group_shard_count", files: []string{countDir + "resource.tf"}, importScript: countDir + "import.sh",
			setup: ordersGroupWithJoinedConsumer,
			stateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("redisstreamcoordinator_group_shard_count.orders", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(12)),
				statecheck.ExpectKnownValue("redisstreamcoordinator_group_shard_count.orders", tfjsonpath.New("previous_shard_count"), knownvalue.Int64Exact(8)),
			},
		},
		{
			name:  "group_shard_count_import_block",
			files: []string{countDir + "resource.tf", countDir + "import-by-string-id.tf"},
			setup: ordersGroupWithJoinedConsumer,
			planChecks: []plancheck.PlanCheck{
				expectImported("redisstreamcoordinator_group_shard_count.orders"),
			},
			stateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("redisstreamcoordinator_group_shard_count.orders", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(12)),
			},
		},
		newGroupWithShardCountCase(countDir),
		{
			// As `make demo` runs it: the first apply creates the groups with
			// the shard count equal to the initial count; once the consumer
			// has joined, the change to 8 shards is applied.
			name: "demo", prior: []string{"demo/main.tf"}, files: []string{"demo/main.tf"}, consumer: true,
			vars: func(*testing.T, *acctest.Env) config.Variables {
				return config.Variables{"orders_shard_count": config.IntegerVariable(8)}
			},
			stateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orders_shard_count", knownvalue.Int64Exact(8)),
				statecheck.ExpectKnownOutputValue("order_123_stream_key", knownvalue.StringExact("orders:5")),
				statecheck.ExpectKnownValue("redisstreamcoordinator_group.payments", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(2)),
			},
		},
		{
			name: "data_source_group", files: []string{"data-sources/redisstreamcoordinator_group/data-source.tf"}, setup: ordersGroupWithConsumer,
			stateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orders_shard_count", knownvalue.Int64Exact(8)),
				statecheck.ExpectKnownOutputValue("orders_resharding", knownvalue.Bool(false)),
			},
		},
		{
			name: "data_source_groups", files: []string{"data-sources/redisstreamcoordinator_groups/data-source.tf"}, setup: ordersGroupWithConsumer,
			stateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orders_shard_counts", knownvalue.MapExact(map[string]knownvalue.Check{ordersGroup: knownvalue.Int64Exact(8)})),
			},
		},
		{
			name: "data_source_producer_routing", files: []string{"data-sources/redisstreamcoordinator_producer_routing/data-source.tf"}, setup: ordersGroupWithConsumer,
			stateChecks: []statecheck.StateCheck{statecheck.ExpectKnownOutputValue("orders_stream_keys", knownvalue.ListSizeExact(8))},
		},
		{
			name: "data_source_assignments", files: []string{"data-sources/redisstreamcoordinator_assignments/data-source.tf"}, setup: ordersGroupWithConsumer,
		},
		{
			name: "data_source_migrations", files: []string{"data-sources/redisstreamcoordinator_migrations/data-source.tf"}, setup: ordersGroupWithConsumer,
			stateChecks: []statecheck.StateCheck{statecheck.ExpectKnownOutputValue("orders_resharding_history", knownvalue.ListSizeExact(0))},
		},
		{
			name: "data_source_members", files: []string{"data-sources/redisstreamcoordinator_members/data-source.tf"}, setup: ordersGroupWithConsumer,
			stateChecks: []statecheck.StateCheck{statecheck.ExpectKnownOutputValue("orders_live_members", knownvalue.ListSizeExact(1))},
		},
		{
			name: "data_source_health", files: []string{"data-sources/redisstreamcoordinator_health/data-source.tf"},
			stateChecks: []statecheck.StateCheck{statecheck.ExpectKnownOutputValue("coordinator_up", knownvalue.Bool(true))},
		},
		{
			name: "data_source_compatibility", files: []string{"data-sources/redisstreamcoordinator_compatibility/data-source.tf"},
		},
		{
			name:  "functions",
			files: []string{"functions/redis_slot/function.tf", "functions/shard_for_key/function.tf", "functions/stream_key/function.tf"},
			stateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orders_0_slot", knownvalue.Int64Exact(8578)),
				statecheck.ExpectKnownOutputValue("order_123_shard", knownvalue.Int64Exact(5)),
				statecheck.ExpectKnownOutputValue("orders_shard_5", knownvalue.StringExact("orders:5")),
				statecheck.ExpectKnownOutputValue("order_123_stream", knownvalue.StringExact("orders:5")),
			},
		},
		{
			name: "ephemeral_token", files: []string{"ephemeral-resources/redisstreamcoordinator_token/ephemeral-resource.tf"},
			rw: exampleRewrite{provider: providerAsWritten},
			vars: func(_ *testing.T, env *acctest.Env) config.Variables {
				return config.Variables{
					"coordinator_endpoint": config.StringVariable(env.Endpoint),
					"ci_username":          config.StringVariable(env.Writer.Username),
					"ci_password":          config.StringVariable(env.Writer.Password),
				}
			},
		},
		{
			name: "health_check", files: []string{"health-check/main.tf"}, setup: ordersGroupWithConsumer,
			nonEmptyPlan: "the data source inside the check block is read on every plan (Terraform reloads it to verify the check)",
			vars: func(*testing.T, *acctest.Env) config.Variables {
				return config.Variables{"stream_prefix": config.StringVariable(ordersPrefix), "consumer_group": config.StringVariable(ordersGroup)}
			},
		},
		{
			name:  "guide_migrate_from_stream_group_module",
			prior: []string{"guides/migrate-from-stream-group-module/before.tf"},
			files: []string{"guides/migrate-from-stream-group-module/after.tf"},
			rw:    exampleRewrite{moduleSources: map[string]string{"orders_stream": "testdata/stream-group-module"}},
			// What the module's script did when the module was applied.
			setup: func(t *testing.T, env *acctest.Env) { createExampleGroup(t, env, ordersPrefix, ordersGroup, 8) },
			priorVars: func(*testing.T, *acctest.Env) config.Variables {
				return config.Variables{"coordinator_password": config.StringVariable("unused-by-the-stand-in")}
			},
			planChecks: []plancheck.PlanCheck{
				expectImported("redisstreamcoordinator_group.orders"),
				expectImported("redisstreamcoordinator_group_shard_count.orders"),
				plancheck.ExpectResourceAction("redisstreamcoordinator_group.orders", plancheck.ResourceActionNoop),
				plancheck.ExpectResourceAction("redisstreamcoordinator_group_shard_count.orders", plancheck.ResourceActionNoop),
				expectForgotten("module.orders_stream.terraform_data.stream_group"),
			},
			noMutations: true,
		},
		{
			name: "guide_safe_shard_change", files: []string{"guides/safe-shard-change/main.tf"},
			setup: ordersGroupWithJoinedConsumer,
			stateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("redisstreamcoordinator_group_shard_count.orders", tfjsonpath.New("migration_state"), knownvalue.StringExact("DEPRECATED")),
				statecheck.ExpectKnownOutputValue("orders_stream_keys", knownvalue.ListSizeExact(12)),
			},
		},
	}
	cases = append(cases, bulkImportExampleCases()...)
	return cases
}

// newGroupWithShardCountCase: creating a group and its shard count in one
// apply, with the count equal to the initial count, scales nothing.
func newGroupWithShardCountCase(countDir string) exampleCase {
	var coord *coordinator.Coordinator
	return exampleCase{
		name: "group_shard_count_with_new_group", files: []string{countDir + "with-new-group.tf"},
		setup: func(_ *testing.T, env *acctest.Env) { coord = env.Coordinator },
		stateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue("redisstreamcoordinator_group.payments", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(4)),
			statecheck.ExpectKnownValue("redisstreamcoordinator_group_shard_count.payments", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(4)),
			stateCheckFunc(func(context.Context, statecheck.CheckStateRequest, *statecheck.CheckStateResponse) error {
				for _, e := range coord.AuditEvents() {
					if e.Action != "CREATE_GROUP" {
						return fmt.Errorf("the apply sent %s %s; want only the group's creation", e.Action, e.Path)
					}
				}
				return nil
			}),
		},
	}
}

// stateCheckFunc adapts a function to statecheck.StateCheck.
type stateCheckFunc func(context.Context, statecheck.CheckStateRequest, *statecheck.CheckStateResponse) error

func (f stateCheckFunc) CheckState(ctx context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = f(ctx, req, resp)
}

func TestExamplesAreAllTested(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range exampleCases() {
		for _, f := range append(append(append([]string{}, c.files...), c.prior...), c.importScript) {
			if f == "" {
				continue
			}
			if _, err := os.Stat(examplesDir + "/" + f); err != nil {
				t.Errorf("case %s names examples/%s, which does not exist", c.name, f)
			}
			covered[f] = true
		}
	}
	for _, f := range exampleFiles(t) {
		if !covered[f] && examplesTestedElsewhere[f] == "" {
			t.Errorf("examples/%s is not exercised by any case in exampleCases (examples_test.go): add a case that applies it", f)
		}
	}
}

// TestExampleImportScripts checks every import.sh names its own resource
// type and an id of the form {stream_prefix}/{consumer_group}.
func TestExampleImportScripts(t *testing.T) {
	for _, f := range exampleFiles(t) {
		if !strings.HasSuffix(f, "/import.sh") {
			continue
		}
		cmds, err := parseImportScript(f)
		if err != nil {
			t.Error(err)
			continue
		}
		dirType := strings.TrimSuffix(strings.TrimPrefix(f, "resources/"), "/import.sh")
		for _, c := range cmds {
			if c.resourceType != dirType {
				t.Errorf("examples/%s imports %s, but documents %s", f, c.address, dirType)
			}
			if _, _, err := parseGroupID(c.id); err != nil {
				t.Errorf("examples/%s: import id %q: %v", f, c.id, err)
			}
		}
	}
}

func TestAccExamples(t *testing.T) {
	t.Parallel()
	for _, c := range exampleCases() {
		t.Run(c.name, func(t *testing.T) {
			if os.Getenv(resource.EnvTfAcc) == "" {
				t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
			}
			env := acctest.New(t, acctest.Options{})
			env.RequireInRepo(t, "examples use fixed names such as orders/order-service, which would collide on a shared coordinator")
			if len(c.rw.moduleSources) > 0 || c.viaCLI != "" {
				t.Parallel()
				runExampleWithCLI(t, env, c)
				return
			}
			resource.ParallelTest(t, exampleTestCase(t, env, c))
		})
	}
}

func exampleTestCase(t *testing.T, env *acctest.Env, c exampleCase) resource.TestCase {
	coord := env.Coordinator
	if c.setup != nil {
		c.setup(t, env)
	}
	var joined func() error
	if c.consumer {
		consumer := env.StartConsumer(t, ordersPrefix, ordersGroup)
		joined = func() error { return waitJoined(ctxT(t), consumer) }
		for _, route := range []string{coordinator.RouteStreamScale, coordinator.RouteGroupScale} {
			coord.InjectFault(coordinator.Fault{Method: "POST", Route: route, Kind: coordinator.FaultDelay, Delay: 30 * time.Second, Until: consumer.Joined, Times: 1000})
		}
	}
	cfg := exampleConfig(t, env, c.files, c.rw)
	if c.probe {
		cfg += providerProbeHCL
	}
	var vars config.Variables
	if c.vars != nil {
		vars = c.vars(t, env)
	}
	auditedBefore := 0
	var steps []resource.TestStep
	if len(c.prior) > 0 {
		var priorVars config.Variables
		if c.priorVars != nil {
			priorVars = c.priorVars(t, env)
		}
		steps = append(steps, resource.TestStep{
			Config: exampleConfig(t, env, c.prior, c.rw), ConfigVariables: priorVars,
			Check: func(*terraform.State) error {
				// The configuration's next change may scale out: it is planned
				// once the consumer runs, as in production.
				if joined != nil {
					if err := joined(); err != nil {
						return err
					}
				}
				auditedBefore = len(coord.AuditEvents())
				return nil
			},
		})
	}
	main := resource.TestStep{
		Config: cfg, ConfigVariables: vars,
		ExpectNonEmptyPlan: c.nonEmptyPlan != "",
		ConfigPlanChecks:   resource.ConfigPlanChecks{PreApply: c.planChecks},
		ConfigStateChecks:  c.stateChecks,
	}
	if c.noMutations {
		main.Check = func(*terraform.State) error {
			if events := coord.AuditEvents(); len(events) != auditedBefore {
				return fmt.Errorf("applying the example sent %d audited mutation(s) to the coordinator, want none: first is %s %s",
					len(events)-auditedBefore, events[auditedBefore].Action, events[auditedBefore].Path)
			}
			return nil
		}
	}
	steps = append(steps, main)
	if c.importScript != "" {
		cmds, err := parseImportScript(c.importScript)
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range cmds {
			steps = append(steps, resource.TestStep{
				Config: cfg, ConfigVariables: vars,
				ResourceName: cmd.address, ImportState: true, ImportStateId: cmd.id,
				ImportStateCheck: expectImportedID(cmd.id),
			})
		}
	}
	return resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, TerraformVersionChecks: versionChecks(cfg), Steps: steps}
}

// ordersGroupWithJoinedConsumer is the group with 8 shards and a consumer
// the coordinator has accepted: a running group, ready to scale out.
func ordersGroupWithJoinedConsumer(t *testing.T, env *acctest.Env) {
	createExampleGroup(t, env, ordersPrefix, ordersGroup, 8)
	if err := waitJoined(ctxT(t), env.StartConsumer(t, ordersPrefix, ordersGroup)); err != nil {
		t.Fatal(err)
	}
}

// ordersGroupWithConsumer is the state most read-side examples assume: the
// order service's group with 8 shards and a live consumer.
func ordersGroupWithConsumer(t *testing.T, env *acctest.Env) {
	createExampleGroup(t, env, ordersPrefix, ordersGroup, 8)
	env.StartConsumer(t, ordersPrefix, ordersGroup)
}

func createExampleGroup(t *testing.T, env *acctest.Env, p, g string, shards int32) {
	t.Helper()
	if _, err := env.Client().CreateGroup(ctxT(t), p, g, &shards, client.Mutation{Reason: "examples test fixture"}); err != nil {
		t.Fatalf("create %s/%s: %v", p, g, err)
	}
}

func expectImportedID(id string) resource.ImportStateCheckFunc {
	return func(states []*terraform.InstanceState) error {
		if len(states) != 1 || states[0].ID != id {
			return fmt.Errorf("want one imported instance with id %q, got %d: %v", id, len(states), states)
		}
		return nil
	}
}

// planCheckFunc adapts a function to plancheck.PlanCheck.
type planCheckFunc func(context.Context, plancheck.CheckPlanRequest, *plancheck.CheckPlanResponse)

func (f planCheckFunc) CheckPlan(ctx context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	f(ctx, req, resp)
}

// expectImported: the plan imports addr (and so does not create it).
func expectImported(addr string) plancheck.PlanCheck {
	return planCheckFunc(func(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
		rc := findChange(req.Plan, addr)
		switch {
		case rc == nil:
			resp.Error = fmt.Errorf("%s is not in the plan", addr)
		case rc.Change.Importing == nil || rc.Change.Actions.Create():
			resp.Error = fmt.Errorf("%s is not imported: actions %v", addr, rc.Change.Actions)
		}
	})
}

// expectForgotten: the plan removes addr from state without destroying it.
func expectForgotten(addr string) plancheck.PlanCheck {
	return planCheckFunc(func(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
		rc := findChange(req.Plan, addr)
		if rc == nil || !rc.Change.Actions.Forget() {
			resp.Error = fmt.Errorf("%s is not planned to be forgotten: %v", addr, rc)
		}
	})
}

func findChange(plan *tfjson.Plan, addr string) *tfjson.ResourceChange {
	for _, rc := range plan.ResourceChanges {
		if rc.Address == addr {
			return rc
		}
	}
	return nil
}

// testCAPEM is a throwaway self-signed CA certificate.
func testCAPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "examples test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
