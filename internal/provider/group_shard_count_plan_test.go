package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// The plan is the product: what a reviewer reads in a saved plan
// (terraform-plugin-testing reads it back with `terraform show -json`).

// reshardingPath is a field of the planned resharding preview.
func reshardingPath(field string) tfjsonpath.Path {
	return tfjsonpath.New("resharding").AtMapKey(field)
}

// checkPlan adapts a function of the saved plan to plancheck.PlanCheck.
func checkPlan(f func(ctx context.Context, plan *tfjson.Plan) error) plancheck.PlanCheck {
	return planCheckFunc(func(ctx context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
		resp.Error = f(ctx, req.Plan)
	})
}

// plannedAfter is a resource's planned value at a top-level key and nested keys.
func plannedAfter(plan *tfjson.Plan, addr string, keys ...string) (any, error) {
	for _, rc := range plan.ResourceChanges {
		if rc.Address != addr {
			continue
		}
		v := rc.Change.After
		for _, k := range keys {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: %v is not an object at %q", addr, v, k)
			}
			v = m[k]
		}
		return v, nil
	}
	return nil, fmt.Errorf("no planned change for %s", addr)
}

// expectBasisIsCoordinators checks the planned basis against the group's
// metadataVersion as the coordinator reports it, whatever its numbering.
func (a *accTest) expectBasisIsCoordinators(t *testing.T, p, g string) plancheck.PlanCheck {
	return checkPlan(func(ctx context.Context, plan *tfjson.Plan) error {
		v, err := plannedAfter(plan, shardCountAddr, "resharding", "basis_metadata_version")
		if err != nil {
			return err
		}
		grp, err := a.group(t, p, g)
		if err != nil {
			return err
		}
		if fmt.Sprint(v) != fmt.Sprint(grp.MetadataVersion) {
			return fmt.Errorf("planned basis_metadata_version %v, coordinator reports %d", v, grp.MetadataVersion)
		}
		return nil
	})
}

func TestAccPullRequestWorkflow_previewOfAnUpdate(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("preview"), "svc"
	a.createConsumedGroupOutOfBand(t, p, g, 4)
	config := func(n int) string { return a.env.ProviderConfig() + shardCountHCL("test", p, g, n) }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				// The count already matches. A new resource's preview is
				// known only after apply: Terraform plans it again during
				// apply from a fresh read, which may find a change to make;
				// this one finds none, and records none.
				Config: config(4),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
					plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("previous_shard_count")),
					plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("metadata_version")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding"), knownvalue.Null()),
					statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("previous_shard_count"), knownvalue.Null()),
				},
			},
			{
				Config: config(8),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("previous_shard_count"), knownvalue.Int64Exact(4)),
					plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("from_shard_count"), knownvalue.Int64Exact(4)),
					plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("to_shard_count"), knownvalue.Int64Exact(8)),
					plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("moved_key_percent"), knownvalue.Float64Exact(50)),
					plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("affected_groups"),
						knownvalue.MapExact(map[string]knownvalue.Check{g: knownvalue.Int64Exact(4)})),
					// A scale-out completes by itself while a consumer is live,
					// which may change before the apply: the apply records it.
					plancheck.ExpectUnknownValue(shardCountAddr, reshardingPath("completes_by_itself")),
					plancheck.ExpectUnknownValue(shardCountAddr, reshardingPath("blocked_by")),
					plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("plan_check"), knownvalue.StringExact(planCheckRead)),
					plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("metadata_version")),
					a.expectBasisIsCoordinators(t, p, g),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("completes_by_itself"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("blocked_by"), knownvalue.Null()),
				},
				Check: a.migrationFinished(p, g, 8),
			},
		},
	})
}

func TestAccPullRequestWorkflow_previewOfACreateOnAnExistingPrefixWithSiblings(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("siblings")
	a.createGroupOutOfBand(t, p, "billing", 8)
	a.createGroupOutOfBand(t, p, "orders", 8)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", p, "orders", 12, `wait_for = "ACCEPTED"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				// A new resource: Terraform plans it again during apply from
				// a fresh read, so the preview is known after apply, and the
				// plan's warning has it as read at plan time.
				plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionCreate),
				plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("previous_shard_count")),
				plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("previous_shard_count"), knownvalue.Int64Exact(8)),
				statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("from_shard_count"), knownvalue.Int64Exact(8)),
				statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("to_shard_count"), knownvalue.Int64Exact(12)),
				statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("moved_key_percent"), knownvalue.Float64Exact(66.67)),
				statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("affected_groups"), knownvalue.MapExact(map[string]knownvalue.Check{
					"billing": knownvalue.Int64Exact(8), "orders": knownvalue.Int64Exact(8),
				})),
			},
			Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "billing", shardCountIs(12)),
				a.diags.ExpectWarning(`goes from 8 to 12 shards`, "66.67%", `also rescales the other groups of the prefix: "billing"`,
					"does not complete by itself", "as read at plan time")),
		}},
	})
}

func TestAccPullRequestWorkflow_previewOfAReplacement(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p1, p2, g := acctest.RandomName("first"), acctest.RandomName("second"), "svc"
	a.createGroupOutOfBand(t, p1, g, 4)
	a.createGroupOutOfBand(t, p2, g, 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p1, g, 4)},
			{
				// Moving the resource to another prefix scales that prefix.
				Config: a.env.ProviderConfig() + shardCountHCL("test", p2, g, 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionDestroyBeforeCreate),
					// The create half is planned again during apply: known after apply.
					plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("from_shard_count"), knownvalue.Int64Exact(4)),
					statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("to_shard_count"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("affected_groups"),
						knownvalue.MapExact(map[string]knownvalue.Check{g: knownvalue.Int64Exact(4)})),
				},
				Check: resource.ComposeTestCheckFunc(a.migrationFinished(p2, g, 2), a.expectGroup(p1, g, shardCountIs(4)),
					a.diags.ExpectWarning(`goes from 4 to 2 shards`, "as read at plan time")),
			},
		},
	})
}

// outOfBandScaleBeforeApply scales the prefix between plan and apply, as
// another actor would while a saved plan waits for review.
func (a *accTest) outOfBandScaleBeforeApply(t *testing.T, p, g string, n int32) plancheck.PlanCheck {
	return checkPlan(func(context.Context, *tfjson.Plan) error {
		scaleOutOfBand(t, a, p, n)
		waitForMigrationDone(t, a, p, g)
		return nil
	})
}

func TestAccPullRequestWorkflow_staleSavedPlanIsRefused(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("stale"), "svc"
	a.createConsumedGroupOutOfBand(t, p, g, 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 4)},
			{
				// Reviewed: 4 → 6. Applied after someone scaled to 8.
				Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 6),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("from_shard_count"), knownvalue.Int64Exact(4)),
					a.outOfBandScaleBeforeApply(t, p, g, 8),
				}},
				ExpectError: diagRe("Stale plan", `was based on group "svc" having 4 shards at metadataVersion`, "now reports 8 shards", "nothing was sent", "Run terraform plan again"),
			},
			{
				// A fresh plan sees 8 and takes it to 6.
				Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 6),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("from_shard_count"), knownvalue.Int64Exact(8)),
				}},
				Check: a.migrationFinished(p, g, 6),
			},
		},
	})
	if c := a.env.Coordinator; c != nil {
		// The refused apply sent nothing: the only scales are the
		// out-of-band one and the fresh plan's.
		if byTerraform := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(byTerraform) != 1 {
			t.Fatalf("want exactly 1 scale by Terraform (the fresh plan's), got %d: %+v", len(byTerraform), auditEvents(c, p))
		}
	}
}

// TestAccPullRequestWorkflow_staleSavedCreateScalesFromWhatItFinds: a saved
// plan that creates the shard count resource of an existing group (4 → 6),
// applied after someone scaled the group to 8. Terraform plans a new
// resource again during apply with no prior or private state, so what the
// plan read live is known after apply (the warning has it as read then):
// the re-plan agrees with the saved plan, and the apply brings the group to
// the configured 6 from the 8 it finds, one scale, recorded as such. Before,
// the preview was known and Terraform refused the apply with "Provider
// produced inconsistent final plan" (issue 43).
func TestAccPullRequestWorkflow_staleSavedCreateScalesFromWhatItFinds(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("stalenew"), "svc"
	a.createConsumedGroupOutOfBand(t, p, g, 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 6),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionCreate),
				plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
				a.outOfBandScaleBeforeApply(t, p, g, 8),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(shardCountAddr, reshardingPath("from_shard_count"), knownvalue.Int64Exact(8)),
				statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("previous_shard_count"), knownvalue.Int64Exact(8)),
			},
			Check: resource.ComposeTestCheckFunc(a.migrationFinished(p, g, 6),
				a.diags.ExpectWarning("Resharding stream prefix", `goes from 4 to 6 shards`, "as read at plan time", "known after apply",
					"import the shard count at the group's current count first")),
		}},
	})
	if c := a.env.Coordinator; c != nil {
		if sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(sent) != 1 {
			t.Fatalf("want exactly 1 scale by Terraform (8 → 6), got %+v", sent)
		}
	}
}

func TestAccPullRequestWorkflow_readPrincipalPlans(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	if a.env.Reader.Username == "" {
		t.Skip("no READ principal configured (TF_ACC_COORDINATOR_READ_USERNAME)")
	}
	p, g := acctest.RandomName("reader"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfigAs(a.env.Reader) + shardCountHCL("test", p, g, 8) +
				groupHCL("other", acctest.RandomName("new-prefix"), "svc", "initial_shard_count = 2"),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}

func TestAccPullRequestWorkflow_planFailsWhenTheCoordinatorCannotBeRead(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("unreadable"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	provider := func(body string) string {
		return fmt.Sprintf(`
terraform {
  required_providers {
    redisstreamcoordinator = { source = %q }
  }
}
provider "redisstreamcoordinator" {
  %s
  retry_wait_min = "50ms"
  retry_wait_max = "500ms"
}
`, acctest.ProviderSource, body)
	}
	resources := shardCountHCL("test", p, g, 8)
	cases := []struct {
		name, provider string
		want           *regexp.Regexp
	}{
		{"wrong password", provider(fmt.Sprintf("endpoint = %q\n  username = %q\n  password = \"wrong\"", a.env.Endpoint, a.env.Writer.Username)),
			regexp.MustCompile(`(?s)Cannot plan the shard count.*401`)},
		{"no password", provider(fmt.Sprintf("endpoint = %q\n  username = %q", a.env.Endpoint, a.env.Writer.Username)),
			regexp.MustCompile(`(?s)(password|401)`)},
		{"login with a wrong password", provider(fmt.Sprintf("endpoint = %q\n  username = %q\n  password = \"wrong\"\n  login = true", a.env.Endpoint, a.env.Writer.Username)),
			regexp.MustCompile(`(?s)(Cannot plan the shard count|login).*401`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: a.factories(),
				Steps:                    []resource.TestStep{{Config: tc.provider + resources, PlanOnly: true, ExpectError: tc.want}},
			})
		})
	}
}

func TestAccPullRequestWorkflow_unreachableEndpointFailsFast(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	// A port nothing listens on: the coordinator cannot be reached at all.
	// The only provider configuration points there (a second, aliased one
	// would share the harness's in-process server with it, where the
	// configuration done last serves every call).
	endpoint := closedEndpoint(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
terraform {
  required_providers {
    redisstreamcoordinator = {
      source = %q
    }
  }
}

provider "redisstreamcoordinator" {
  endpoint = %q
  username = "u"
  password = "p"
}

resource "redisstreamcoordinator_group_shard_count" "test" {
  stream_prefix  = "orders"
  consumer_group = "svc"
  shard_count    = 8
}
`, acctest.ProviderSource, endpoint),
			PlanOnly: true,
			// The requirement (issue 10): a user waits seconds, not minutes. A
			// refusal is retried only within the short connection budget
			// (client.TestConnectionBudgetBoundsRetries), not max_retries ×
			// backoff, and the error says so, with what to check.
			ExpectError: regexp.MustCompile(`(?s)Cannot plan the shard count.*` + words("Nothing accepted a connection") + ".*" +
				words("check the endpoint's host and port") + ".*" + words("Refused connections are retried only briefly")),
		}},
	})
}

func TestAccGroupShardCount_twoResourcesOnOnePrefixFailThePlan(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("twice")
	a.createGroupOutOfBand(t, p, "a", 2)
	a.createGroupOutOfBand(t, p, "b", 2)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:      a.env.ProviderConfig() + shardCountHCL("a", p, "a", 3) + shardCountHCL("b", p, "b", 4),
			PlanOnly:    true,
			ExpectError: diagRe("more than one shard count resource", `groups "a", "b"`, "Keep one"),
		}},
	})
}

func TestAccGroupShardCount_scaleBlockedByAStuckScaleOutFailsThePlan(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	// A name the server accepts that must be percent-encoded in the path the
	// message gives for the rollback call.
	p, g := acctest.RandomName("stuck"), "Legacy svc"
	a.createGroupOutOfBand(t, p, g, 2)
	scaleOutOfBand(t, a, p, 4) // no consumer: stays ACTIVE
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:   a.env.ProviderConfig() + shardCountHCL("test", p, g, 6),
			PlanOnly: true,
			ExpectError: diagRe("Cannot scale stream prefix", "while another resharding is in progress", "must wait for migration reshard-", `of group "Legacy svc" (2→4 shards, ACTIVE)`, "no live consumer", "Start a consumer",
				"POST /coord/v1/streams/"+p+"/groups/Legacy%20svc/migrations/reshard-", "/rollback"),
		}},
	})
}

// leaveMigrationPreparing scales stream prefix p to target out of band with
// its provisioning failing, so its first group's migration stays PREPARING
// (CONTRACT §4.6). The scale is sent once: a retry would resume it.
func (a *accTest) leaveMigrationPreparing(ctx context.Context, c *coordinator.Coordinator, p string, target int32) error {
	return a.leaveMigrationPreparingAt(ctx, c, p, target, 0)
}

// leaveMigrationPreparingAt is leaveMigrationPreparing failing at the
// at-th group of the prefix (in name order): the groups before it complete
// the scale.
func (a *accTest) leaveMigrationPreparingAt(ctx context.Context, c *coordinator.Coordinator, p string, target int32, at int) error {
	noRetries, err := a.noRetriesClient()
	if err != nil {
		return err
	}
	c.FailStreamScaleAt(p, at)
	if _, err := noRetries.ScaleStream(ctx, p, target, outOfBandMutation()); err == nil {
		return fmt.Errorf("the armed provisioning failure did not fail the scale of %s to %d", p, target)
	}
	return nil
}

// noRetriesClient is the WRITE principal's client with no retries: an
// armed provisioning fault fails its one send.
func (a *accTest) noRetriesClient() (*client.Client, error) {
	return client.New(client.Config{Endpoint: a.env.Endpoint, Username: a.env.Writer.Username, Password: a.env.Writer.Password, RunID: "tfacc"})
}

func TestAccGroupShardCount_preparingMigrationToAnotherTarget(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "fails a stream scale's provisioning, which leaves its migration PREPARING")
	p, g := acctest.RandomName("preparing"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	if err := a.leaveMigrationPreparing(ctxT(t), c, p, 4); err != nil {
		t.Fatal(err)
	}
	wantStuck := diagRe("PREPARING", "never moves by itself", "even a scale back to 2 shards", "only way out is its own target: set shard_count = 4")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			// Any other target, even the count the group has, fails the plan.
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 6), PlanOnly: true, ExpectError: wantStuck},
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 3), PlanOnly: true, ExpectError: wantStuck},
			// So does the count the group still has: the coordinator refuses
			// that scale too, and the migration would block every later one.
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 2), PlanOnly: true, ExpectError: wantStuck},
			{
				// Its own target resumes it. (A new resource: the plan's
				// warning says so; its values are known after apply.)
				Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 4),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
				}},
				Check: resource.ComposeTestCheckFunc(a.expectGroup(p, g, shardCountIs(4)),
					a.diags.ExpectWarning("The change resumes migration reshard-", `of group "svc" (2→4 shards, PREPARING)`)),
			},
		},
	})
}

// TestAccGroupShardCount_preparingMigrationAppearsBeforeApply: the plan was
// clean (4 → 6), then a stream scale to 8 failed its provisioning before the
// apply, leaving a PREPARING migration: a migration that appeared changes the
// plan's basis. The apply fails at once as a stale plan, naming the only way
// out, and sends nothing.
func TestAccGroupShardCount_preparingMigrationAppearsBeforeApply(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "fails a stream scale's provisioning between plan and apply")
	p, g := acctest.RandomName("preparing"), "svc"
	a.createConsumedGroupOutOfBand(t, p, g, 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 4)},
			{
				Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 6),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
					checkPlan(func(ctx context.Context, _ *tfjson.Plan) error {
						return a.leaveMigrationPreparing(ctx, c, p, 8)
					}),
				}},
				ExpectError: diagRe("Stale plan", "PREPARING", "never moves by itself", "only way out is its own target: set shard_count = 8"),
			},
		},
	})
	if byTerraform := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(byTerraform) != 0 {
		t.Fatalf("the failed apply must send no scale; got %+v", byTerraform)
	}
	if got, err := a.group(t, p, g); err != nil || got.ShardCount != 4 || got.ActiveMigration == nil || got.ActiveMigration.State != client.MigrationPreparing {
		t.Fatalf("want the group left at 4 shards with its PREPARING migration; got %+v, %v", got, err)
	}
}

func TestAccGroupShardCount_providerConfigurationUnknownAtPlan(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("deferred"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	config := a.providerConfigUnknownAtPlan() + shardCountHCL("test", p, g, 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
			}},
			Check: resource.ComposeTestCheckFunc(
				a.expectGroup(p, g, shardCountIs(1)),
				a.diags.ExpectWarning("Shard count change not checked at plan time", "known only after apply"),
				resource.TestCheckResourceAttr(shardCountAddr, "resharding.from_shard_count", "2"),
			),
		}},
	})
}

func TestAccGroupShardCount_metadataRegressionFailsClosed(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("regress"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	scaleOutOfBand(t, a, p, 1) // a scale-in without consumers completes
	waitForMigrationDone(t, a, p, g)
	config := func(extra ...string) string { return a.env.ProviderConfig() + shardCountHCL("test", p, g, 1, extra...) }
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config()},
			{
				// The metadata key is lost and the group recreated: a new
				// group starts at metadataVersion 1 (CONTRACT §4.2), below
				// what Terraform saw after the scale.
				PreConfig: func() {
					ctx := ctxT(t)
					if _, err := a.env.Client().DeleteGroup(ctx, p, g, true, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
					a.createGroupOutOfBand(t, p, g, 1)
				},
				Config:      config(),
				ExpectError: diagRe("regressed", "had seen metadataVersion", "then reported metadataVersion 1.", "Runbook", "acknowledged_metadata_version = 1"),
			},
			{
				// A wrong acknowledgement keeps it closed.
				Config:      config("acknowledged_metadata_version = 999"),
				ExpectError: diagRe("regressed", "acknowledged_metadata_version is 999, higher than 1"),
			},
			{
				// The operator followed the runbook and accepts version 1.
				Config: config("acknowledged_metadata_version = 1"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("metadata_version"), knownvalue.Int64Exact(1)),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("metadata_version"), knownvalue.Int64Exact(1)),
				},
			},
		},
	})
	if c := a.env.Coordinator; c != nil {
		if sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP"); len(sent) != 0 {
			t.Fatalf("Terraform scaled a group whose metadata regressed: %+v", sent)
		}
	}
}

// outOfBandMutation is the audit identity of the tests' own changes.
func outOfBandMutation() client.Mutation {
	return client.Mutation{RequestedBy: "tfacc-out-of-band", Reason: "test: another actor"}
}
