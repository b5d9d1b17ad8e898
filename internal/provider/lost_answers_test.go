package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

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

// gatewayHTML is what a load balancer or ingress sends instead of the
// coordinator's answer.
func gatewayHTML(status int) string {
	return fmt.Sprintf("<html><head><title>%d</title></head><body><center><h1>%d Gateway Error</h1></center><hr><center>nginx</center></body></html>", status, status)
}

// lostAnswer is one way a proxy in front of the coordinator loses the answer
// to a request the coordinator has carried out (issue 20).
type lostAnswer struct {
	name  string
	fault coordinator.Fault
	// provider is extra provider configuration the case needs.
	provider []string
}

var lostAnswers = []lostAnswer{
	{name: "502 HTML", fault: coordinator.Fault{Kind: coordinator.FaultRespondAfterApply, Status: 502, Body: gatewayHTML(502), ContentType: "text/html"}},
	{name: "504 HTML", fault: coordinator.Fault{Kind: coordinator.FaultRespondAfterApply, Status: 504, Body: gatewayHTML(504), ContentType: "text/html"}},
	{name: "reset", fault: coordinator.Fault{Kind: coordinator.FaultResetAfterApply}},
	{name: "garbled 2xx", fault: coordinator.Fault{Kind: coordinator.FaultGarbleAfterApply}},
	// The answer comes after request_timeout: the client gives up first.
	{name: "delay past deadline", fault: coordinator.Fault{Kind: coordinator.FaultHangAfterApply}, provider: []string{`request_timeout = "1s"`}},
}

// expectNoImportHint: no diagnostic of the run tells the user to import a
// group (the run's own group is never "someone else's").
func (a *accTest) expectNoImportHint() func(*terraform.State) error {
	return a.diags.ExpectNoWarning("terraform import")
}

// expectOneTerraformMutation: the audit log shows the action once, sent by
// Terraform: no duplicate after the lost answer.
func expectOneTerraformMutation(c *coordinator.Coordinator, p, action string) func(*terraform.State) error {
	return func(*terraform.State) error {
		events := terraformMutations(c, p, action)
		if len(events) != 1 || events[0].Outcome != "SUCCESS" {
			return fmt.Errorf("want exactly one successful %s from Terraform, the audit log has %+v", action, events)
		}
		return nil
	}
}

// TestAccLostAnswers: for each mutation (create, scale, delete) and each way
// the answer is lost after the coordinator carried the request out, the same
// apply reads back, finds the change made, and converges: one audited
// mutation, no duplicate, no import hint, an empty plan afterwards.
func TestAccLostAnswers(t *testing.T) {
	for _, la := range lostAnswers {
		t.Run("create/"+la.name, func(t *testing.T) { testLostCreateAnswer(t, la) })
		t.Run("scale/"+la.name, func(t *testing.T) { testLostScaleAnswer(t, la) })
		t.Run("delete/"+la.name, func(t *testing.T) { testLostDeleteAnswer(t, la) })
	}
}

func testLostCreateAnswer(t *testing.T, la lostAnswer) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "a fault applies the create and then loses its answer; the audit log counts the creates")
	p, g := acctest.RandomName("lostcreate"), "svc"
	f := la.fault
	f.Method, f.Route = "POST", coordinator.RouteGroup
	c.InjectFault(f)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig(la.provider...) + groupHCL("test", p, g, "initial_shard_count = 3"),
			Check: resource.ComposeTestCheckFunc(
				a.diags.ExpectWarning("Adopted a group whose create response was lost", "terraform-"),
				a.expectGroup(p, g, shardCountIs(3)),
				resource.TestCheckResourceAttr("redisstreamcoordinator_group.test", "shard_count", "3"),
				expectOneTerraformMutation(c, p, "CREATE_GROUP"),
				a.expectNoImportHint(),
			),
		}},
	})
}

func testLostScaleAnswer(t *testing.T, la lostAnswer) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "a fault applies the scale and then loses its answer; the audit log counts the scales")
	p, g := acctest.RandomName("lostscale"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	c.SetUndrainedShard(p, g, 3, true) // the migration runs until the provider waits for it
	f := la.fault
	f.Method, f.Route = "POST", coordinator.RouteStreamScale
	c.InjectFault(f)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			PreConfig:         func() { go drainOnceWaiting(t, c, p, g, 3) },
			Config:            a.env.ProviderConfig(la.provider...) + shardCountHCL("test", p, g, 2),
			ConfigStateChecks: expectShardCountState(2, "DEPRECATED"),
			Check: resource.ComposeTestCheckFunc(
				a.migrationFinished(p, g, 2),
				a.diags.ExpectWarning("The answer to the scale of stream prefix", "the scale had been applied", "no second scale is sent"),
				expectOneTerraformMutation(c, p, "SCALE_STREAM"),
				func(*terraform.State) error {
					if n := c.RequestCount("POST", coordinator.RouteGroupScale); n != 0 {
						return fmt.Errorf("the read-back sent %d per-group scales", n)
					}
					return nil
				},
			),
		}},
	})
}

func testLostDeleteAnswer(t *testing.T, la lostAnswer) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "a fault applies the delete and then loses its answer; the audit log counts the deletes")
	p, g := acctest.RandomName("lostdelete"), "svc"
	provider := a.env.ProviderConfig(la.provider...)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: provider + groupHCL("test", p, g, "initial_shard_count = 2", `deletion_policy = "DELETE"`)},
			{
				PreConfig: func() {
					f := la.fault
					f.Method, f.Route = "DELETE", coordinator.RouteGroup
					c.InjectFault(f)
				},
				Config: provider,
				Check: resource.ComposeTestCheckFunc(
					a.diags.ExpectWarning("The answer to the group's delete was lost; the group is gone"),
					func(*terraform.State) error {
						if _, err := a.group(t, p, g); !client.IsNotFound(err) {
							return fmt.Errorf("the group must be gone, reading it gave %v", err)
						}
						return nil
					},
					expectOneTerraformMutation(c, p, "DELETE_GROUP"),
				),
			},
		},
	})
}

// TestAccGroupShardCount_refreshNeverReportsUnfinishedReshardingAsDone: a
// migration to the configured count is under way (another actor scaled the
// prefix; a member is slow to release). The plan is not "No changes": it is
// an update whose resharding preview says a migration is already under way,
// since when and what it waits for; applying it waits until the migration
// completed and sends no scale of its own (issue 20, part 2).
func TestAccGroupShardCount_refreshNeverReportsUnfinishedReshardingAsDone(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "keeps the migration DRAINING until the provider waits for it, and reads the audit log")
	p, g := acctest.RandomName("underway"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	c.SetUndrainedShard(p, g, 3, true)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 4)},
			{
				// Someone scales the prefix 4 → 2; the configuration is
				// changed to 2 too (or the scale was this configuration's,
				// with its answer lost).
				PreConfig: func() {
					scaleOutOfBand(t, a, p, 2)
					// With no consumer the coordinator's next loop tick takes the
					// migration to DRAINING, where the undrained shard holds it.
					waitForGroup(t, a, p, g, migrationIn(client.MigrationDraining))
					go drainOnceWaiting(t, c, p, g, 3)
				},
				Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("plan_check"), knownvalue.StringExact(planCheckUnderWay)),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("blocked_by"),
						knownvalue.StringRegexp(regexp.MustCompile(`^migration reshard-\S+ \(4→2 shards\) is already under way since \d{4}-\d\d-\d\dT\S+Z, now DRAINING: it waits for the removed shards `+regexp.QuoteMeta(p)+`:2\.\.`+regexp.QuoteMeta(p)+`:3`))),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("from_shard_count"), knownvalue.Int64Exact(4)),
				}},
				ConfigStateChecks: expectShardCountState(2, "DEPRECATED"),
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, g, 2),
					a.diags.ExpectWarning("is already under way", "without sending another scale"),
					func(*terraform.State) error {
						if events := auditEvents(c, p, "SCALE_STREAM"); len(events) != 1 || len(terraformMutations(c, p, "SCALE_STREAM")) != 0 {
							return fmt.Errorf("want only the out-of-band scale, got %+v", events)
						}
						return nil
					},
				),
			},
		},
	})
}

// The same plan in a prefix of two groups: the sibling's migration to the
// count is under way too, and moves by itself between the plan and the
// apply, so whether the wait completes by itself is the apply's to record
// (as for a change, movesByItself). The plan said it was known, and the
// apply recorded it from the refresh, whatever happened meanwhile: a
// scale-out whose sibling's consumers left was recorded as completing by
// itself while the apply warned it waited for a consumer (issue 43.7).
func TestAccGroupShardCount_waitPlanWithASiblingUnderWayLeavesTheOutcomeToTheApply(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "keeps the migrations DRAINING until released")
	p, g, other := acctest.RandomName("underway2"), "svc", "audit"
	a.createGroupOutOfBand(t, p, g, 4)
	a.createGroupOutOfBand(t, p, other, 4)
	c.SetUndrainedShard(p, g, 3, true)
	c.SetUndrainedShard(p, other, 3, true)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 4)},
			{
				PreConfig: func() {
					scaleOutOfBand(t, a, p, 2)
					go drainOnceWaiting(t, c, p, g, 3)
				},
				Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("plan_check"), knownvalue.StringExact(planCheckUnderWay)),
					plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("completes_by_itself")),
					plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("blocked_by")),
					// The sibling's migration moves on after the plan.
					planCheckFunc(func(context.Context, plancheck.CheckPlanRequest, *plancheck.CheckPlanResponse) {
						c.SetUndrainedShard(p, other, 3, false)
					}),
				}},
				ConfigStateChecks: append(expectShardCountState(2, "DEPRECATED"),
					statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("completes_by_itself"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("resharding").AtMapKey("blocked_by"), knownvalue.Null())),
				Check: resource.ComposeTestCheckFunc(
					a.migrationFinished(p, g, 2),
					a.migrationFinished(p, other, 2),
					a.diags.ExpectWarning("is already under way", `depend on whether group(s) "audit" have a live consumer`),
				),
			},
		},
	})
}

// A stream scale whose lost answer the read-back found applied is said and
// kept in state when the apply stops at its next read (a 403 on the groups
// listing): the next plan waits for that migration, sending no second scale.
func TestAccGroupShardCount_lostScaleReadBackAppliedThenListingFailsIsRecorded(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "a fault applies the scale, loses its answer, then refuses the listing after the read-back")
	p, g := acctest.RandomName("lostlist"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	c.SetUndrainedShard(p, g, 3, true) // the migration stays under way until step 2 drains it
	forbid := coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultRespond, Status: 403,
		ErrorCode: "ACCESS_DENIED", Message: "monitoring is not allowed"}
	// The read-back is the first listing after the scale; the one after it fails.
	afterReadBack := coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultDelay,
		OnMatch: func() { c.InjectFault(forbid) }}
	arm := betweenPlanAndApply(func() {
		c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteStreamScale, Kind: coordinator.FaultResetAfterApply,
			OnMatch: func() { c.InjectFault(afterReadBack) }})
	})
	config := a.env.ProviderConfig() + shardCountHCL("test", p, g, 2)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 4)},
			{
				Config:           config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{arm}},
				ExpectError:      regexp.MustCompile(`Failed to list the groups of stream prefix`),
			},
			{
				PreConfig: func() { go drainOnceWaiting(t, c, p, g, 3) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("plan_check"), knownvalue.StringExact(planCheckUnderWay)),
				}},
				ConfigStateChecks: expectShardCountState(2, "DEPRECATED"),
				Check: resource.ComposeTestCheckFunc(
					// Said by the apply that stopped, which had found the scale applied.
					a.diags.ExpectWarning("The answer to the scale of stream prefix", "the scale had been applied"),
					a.migrationFinished(p, g, 2), expectOneTerraformMutation(c, p, "SCALE_STREAM"),
				),
			},
		},
	})
}
