package provider

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

const healthConfig = `
data "redisstreamcoordinator_health" "this" {}
`

func TestAccHealthDataSource(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	const ds = "data.redisstreamcoordinator_health.this"
	checks := []statecheck.StateCheck{
		statecheck.ExpectKnownValue(ds, tfjsonpath.New("status"), knownvalue.StringExact("UP")),
		statecheck.ExpectKnownValue(ds, tfjsonpath.New("loop"), knownvalue.StringExact("UP")),
		statecheck.ExpectKnownValue(ds, tfjsonpath.New("coordinator_id"), knownvalue.NotNull()),
		statecheck.ExpectKnownValue(ds, tfjsonpath.New("redis"), knownvalue.NotNull()),
	}
	if env.Coordinator != nil {
		// The in-repo coordinator is the memory store with provisioning off.
		checks = append(checks, statecheck.ExpectKnownValue(ds, tfjsonpath.New("redis"), knownvalue.StringExact("NOT_CONFIGURED")))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:            env.ProviderConfigAs(env.Reader) + healthConfig,
			ConfigStateChecks: checks,
		}},
	})
}

func TestAccHealthDataSource_memberPrincipalForbidden(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	if env.Member.Username == "" {
		t.Skip("no MEMBER principal configured for the real coordinator (" + acctest.EnvMemberUsername + ")")
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      env.ProviderConfigAs(env.Member) + healthConfig,
			ExpectError: wrappedText(`Failed to read the coordinator's health`),
		}, {
			Config:      env.ProviderConfigAs(env.Member) + healthConfig,
			ExpectError: wrappedText(`The coordinator answered 403 Forbidden to GET /coord/v1/monitoring/health`),
		}, {
			Config:      env.ProviderConfigAs(env.Member) + healthConfig,
			ExpectError: wrappedText(`lacks the READ role this call needs`),
		}},
	})
}

// healthCheckExample is the documented CI gate, applied as users copy it.
var healthCheckExample = config.StaticFile("../../examples/health-check/main.tf")

// exampleFactories serve the provider configured only through the
// environment, as the examples expect, authenticated as creds.
func exampleFactories(t *testing.T, env *acctest.Env, creds acctest.Credentials) map[string]func() (tfprotov6.ProviderServer, error) {
	t.Helper()
	return providerFactoriesWithEnv(map[string]string{
		envName("endpoint"):       env.Endpoint,
		envName("username"):       creds.Username,
		envName("password"):       creds.Password,
		envName("retry_wait_min"): "50ms",
		envName("retry_wait_max"): "500ms",
	})
}

// onlyCheckBlockReads is the plan after applying the health-check example:
// the check block's scoped data source is read, nothing else.
var onlyCheckBlockReads = resource.ConfigPlanChecks{
	PostApplyPreRefresh:  []plancheck.PlanCheck{expectOnlyReads{"data.redisstreamcoordinator_health.now"}},
	PostApplyPostRefresh: []plancheck.PlanCheck{expectOnlyReads{"data.redisstreamcoordinator_health.now"}},
}

// expectOnlyReads fails a plan that does anything but read the given data
// sources.
type expectOnlyReads []string

func (e expectOnlyReads) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Change.Actions.NoOp() || (rc.Change.Actions.Read() && slices.Contains(e, rc.Address)) {
			continue
		}
		resp.Error = fmt.Errorf("plan %v %s; only reads of %v are expected", rc.Change.Actions, rc.Address, []string(e))
		return
	}
	for name, oc := range req.Plan.OutputChanges {
		if !oc.Actions.NoOp() {
			resp.Error = fmt.Errorf("plan changes output %s; only reads of %v are expected", name, []string(e))
			return
		}
	}
}

func healthCheckVariables(p, g string) config.Variables {
	return config.Variables{"stream_prefix": config.StringVariable(p), "consumer_group": config.StringVariable(g)}
}

// healthBody makes every health call answer body, as a coordinator in that
// condition would.
func healthBody(c *coordinator.Coordinator, body string) {
	c.InjectFault(coordinator.Fault{
		Method: http.MethodGet, Route: coordinator.RouteHealth, Times: 1 << 20,
		Kind: coordinator.FaultRespond, Status: http.StatusOK, Body: body, ContentType: "application/json",
	})
}

func TestAccHealthCheckExample_healthy(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	p, g := acctest.RandomName("orders"), acctest.RandomName("svc")
	dsCreateGroup(t, env, p, g, 2)
	env.StartConsumer(t, p, g)
	dsWaitForConvergence(t, env, p, g, 1)
	resource.ParallelTest(t, resource.TestCase{
		Steps: []resource.TestStep{{
			// A configuration file with a provider block takes its
			// providers at the step level.
			ProtoV6ProviderFactories: exampleFactories(t, env, env.Reader),
			ConfigFile:               healthCheckExample,
			ConfigVariables:          healthCheckVariables(p, g),
			// A check block's data source is read again on every apply, so
			// the plan is never empty; nothing else may change.
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks:   onlyCheckBlockReads,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_health.gate", tfjsonpath.New("status"), knownvalue.StringExact("UP")),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_assignments.gate", tfjsonpath.New("invariant_violations"), knownvalue.ListSizeExact(0)),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_assignments.gate", tfjsonpath.New("target_assignment"), knownvalue.MapSizeExact(1)),
			},
		}},
	})
}

// redis UNKNOWN (the coordinator's first, asynchronous Redis check) must not
// fail the gate: only status is tested.
func TestAccHealthCheckExample_redisUnknownPasses(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	c := env.RequireInRepo(t, "answers health with redis UNKNOWN")
	p, g := acctest.RandomName("orders"), acctest.RandomName("svc")
	dsCreateGroup(t, env, p, g, 1)
	healthBody(c, `{"status":"UP","coordinatorId":"tfacc-coordinator","redis":"UNKNOWN","loop":"UP"}`)
	resource.ParallelTest(t, resource.TestCase{
		Steps: []resource.TestStep{{
			// A configuration file with a provider block takes its
			// providers at the step level.
			ProtoV6ProviderFactories: exampleFactories(t, env, env.Reader),
			ConfigFile:               healthCheckExample,
			ConfigVariables:          healthCheckVariables(p, g),
			// A check block's data source is read again on every apply, so
			// the plan is never empty; nothing else may change.
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks:   onlyCheckBlockReads,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_health.gate", tfjsonpath.New("status"), knownvalue.StringExact("UP")),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_health.gate", tfjsonpath.New("redis"), knownvalue.StringExact("UNKNOWN")),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_health.gate", tfjsonpath.New("coordinator_id"), knownvalue.StringExact("tfacc-coordinator")),
			},
		}},
	})
}

func TestAccHealthCheckExample_degradedFailsPlan(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	c := env.RequireInRepo(t, "answers health DEGRADED")
	p, g := acctest.RandomName("orders"), acctest.RandomName("svc")
	dsCreateGroup(t, env, p, g, 1)
	healthBody(c, `{"status":"DEGRADED","coordinatorId":"tfacc-coordinator","redis":"DOWN","loop":"UP"}`)
	resource.ParallelTest(t, resource.TestCase{
		Steps: []resource.TestStep{{
			// A configuration file with a provider block takes its
			// providers at the step level.
			ProtoV6ProviderFactories: exampleFactories(t, env, env.Reader),
			ConfigFile:               healthCheckExample,
			ConfigVariables:          healthCheckVariables(p, g),
			ExpectError:              wrappedText(`Coordinator tfacc-coordinator is DEGRADED (redis DOWN); refusing to plan changes against it.`),
		}},
	})
}

func TestAccHealthCheckExample_invariantViolationFailsPlan(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	c := env.RequireInRepo(t, "answers assignments with an invariant violation")
	p, g := acctest.RandomName("orders"), acctest.RandomName("svc")
	dsCreateGroup(t, env, p, g, 2)
	c.InjectFault(coordinator.Fault{
		Method: http.MethodGet, Route: coordinator.RouteAssignments, Times: 1 << 20,
		Kind: coordinator.FaultRespond, Status: http.StatusOK, ContentType: "application/json",
		Body: `{"targetAssignment":{"m-1":[{"shardIndex":0},{"shardIndex":1}]},` +
			`"currentAssignments":{"m-1":[{"shardIndex":0},{"shardIndex":1}],"m-2":[{"shardIndex":1}]},` +
			`"revokeProgress":{},"invariantViolations":["shard 1 is owned by m-1 and m-2"]}`,
	})
	resource.ParallelTest(t, resource.TestCase{
		Steps: []resource.TestStep{{
			// A configuration file with a provider block takes its
			// providers at the step level.
			ProtoV6ProviderFactories: exampleFactories(t, env, env.Reader),
			ConfigFile:               healthCheckExample,
			ConfigVariables:          healthCheckVariables(p, g),
			ExpectError:              wrappedText(fmt.Sprintf(`Group %s of %s violates assignment invariants: shard 1 is owned by m-1 and m-2`, g, p)),
		}},
	})
}

func TestAccHealthDataSource_example(t *testing.T) {
	env := dsExampleEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: dsExampleConfig(t, env, "redisstreamcoordinator_health"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("coordinator_up", knownvalue.Bool(true)),
			},
		}},
	})
}
