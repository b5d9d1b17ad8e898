package provider

import (
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

// TestAccGroup_planFailsWhenTheCoordinatorCannotBeRead: the plan-time read is
// authoritative (issue 10.1): a wrong password fails the plan with the cause
// and the fix; a READ principal is enough to plan.
func TestAccGroup_planFailsWhenTheCoordinatorCannotBeRead(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("authplan"), "svc"
	wrong := acctest.Credentials{Username: a.env.Writer.Username, Password: "not-the-password"}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config:      a.env.ProviderConfigAs(wrong, "max_retries = 0") + groupHCL("test", p, g, "initial_shard_count = 2"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Cannot plan group "svc".*listing the coordinator's groups failed.*401.*Check\s+username/password`),
			},
			{
				// Nothing listens there: the plan fails with the transport error.
				Config:      a.withEndpoint(closedEndpoint(t)).ProviderConfig("max_retries = 0") + groupHCL("test", p, g, "initial_shard_count = 2"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Cannot plan group "svc".*listing the coordinator.s groups failed.*connection\s+refused.*Could\s+not\s+connect\s+to\s+the\s+coordinator`),
			},
			{
				// A READ principal plans (the PR job); nothing is applied.
				Config:             a.env.ProviderConfigAs(a.env.Reader) + groupHCL("test", p, g, "initial_shard_count = 2"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// TestAccGroup_createTakesSiblingsCountAtApply: the count inherited from
// the siblings is a live read, which Terraform's plan of the create at
// apply cannot reproduce: the plan leaves it unknown and warns with the
// siblings' count now; the create lists the prefix once and takes it.
func TestAccGroup_createTakesSiblingsCountAtApply(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("inherit")
	a.createGroupOutOfBand(t, p, "billing", 6)
	c := a.env.Coordinator
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("test", p, "audit"),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionCreate),
					plancheck.ExpectUnknownValue(groupAddr, tfjsonpath.New("initial_shard_count")),
					plancheck.ExpectUnknownValue(groupAddr, tfjsonpath.New("shard_count")),
					plancheck.ExpectUnknownValue(groupAddr, tfjsonpath.New("sibling_shard_counts")),
					plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("recreation"), knownvalue.Null()),
					betweenPlanAndApply(func() {
						if c != nil {
							c.ResetRequestCounts()
						}
					}),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("initial_shard_count"), knownvalue.Int64Exact(6)),
				statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("sibling_shard_counts"),
					knownvalue.MapExact(map[string]knownvalue.Check{"billing": knownvalue.Int64Exact(6)})),
			},
			Check: resource.ComposeTestCheckFunc(
				func(*terraform.State) error { // first: the other checks send requests too
					if c == nil {
						return nil
					}
					// The plan of the create at apply and the create each list once.
					if n := c.RequestCount("GET", coordinator.RouteMonitoringGroups); n > 2 {
						return fmt.Errorf("apply listed every group %d times; want at most 2", n)
					}
					return nil
				},
				a.diags.ExpectWarning(fmt.Sprintf("Group %s/audit takes its siblings' shard count, 6 now", p)),
				a.expectGroup(p, "audit", shardCountIs(6)),
			),
		}},
	})
}

// TestAccGroup_staleSiblingBasisFollowedByCreate: a sibling rescaled
// between the saved plan and its apply. A group that inherits its count is
// created at the sibling's count now (the plan showed it as known after
// apply); one with a configured count that no longer matches is refused in
// the provider's words, nothing sent. Before, both failed with "Provider
// produced inconsistent final plan".
func TestAccGroup_staleSiblingBasisFollowedByCreate(t *testing.T) {
	for _, configured := range []bool{false, true} {
		t.Run(fmt.Sprintf("configured=%v", configured), func(t *testing.T) {
			a := newAccTest(t, acctest.Options{})
			p := acctest.RandomName("stale")
			a.createGroupOutOfBand(t, p, "billing", 4)
			step := resource.TestStep{
				Config: a.env.ProviderConfig() + groupHCL("test", p, "audit"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectUnknownValue(groupAddr, tfjsonpath.New("initial_shard_count")),
						betweenPlanAndApply(func() { dsScaleOutOfBand(t, a.env, p, 6) }),
					},
				},
				Check: a.expectGroup(p, "audit", shardCountIs(6)),
			}
			if configured {
				step.Config = a.env.ProviderConfig() + groupHCL("test", p, "audit", "initial_shard_count = 4")
				step.ConfigPlanChecks.PreApply[0] = plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("initial_shard_count"), knownvalue.Int64Exact(4))
				step.ExpectError = regexp.MustCompile(`(?s)Shard count differs from the other groups of the stream prefix.*` +
					words(`"billing" (6 shards)`) + `.*` + words("Nothing was sent to the coordinator"))
			}
			resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: a.factories(), Steps: []resource.TestStep{step}})
			if !configured {
				return
			}
			if _, err := a.group(t, p, "audit"); !client.IsNotFound(err) {
				t.Fatalf("the stale plan must not create the group; GET answered %v", err)
			}
			if c := a.env.Coordinator; c != nil {
				if creates := auditEvents(c, p, "CREATE_GROUP"); len(creates) != 1 {
					t.Fatalf("want only the out-of-band CREATE_GROUP, got %+v", creates)
				}
			}
		})
	}
}

// TestAccGroup_groupsCreatedTogetherMustAgree: two new groups of one prefix
// with different counts fail the plan, whichever is planned first (10.4).
func TestAccGroup_groupsCreatedTogetherMustAgree(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("together")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("first", p, "a", "initial_shard_count = 3") +
				groupHCL("second", p, "b", "initial_shard_count = 5"),
			ExpectError: regexp.MustCompile(`(?s)pre-apply plan.*Groups created together under one stream prefix disagree.*Nothing\s+was\s+sent`),
		}},
	})
	if !acctest.IsReal() {
		if events := auditEvents(a.env.Coordinator, p); len(events) != 0 {
			t.Fatalf("nothing may be sent; got %+v", events)
		}
	}
}

// closedEndpoint is a loopback URL where every connection is refused for
// the test's life (acctest.RefusedAddr).
func closedEndpoint(t *testing.T) string {
	t.Helper()
	return "http://" + acctest.RefusedAddr(t)
}

// TestAccGroup_unknownProviderConfigSkipsPlanChecksAndSaysSo: with an
// endpoint known only after apply, the plan cannot read the coordinator: it
// warns, leaves initial_shard_count unknown, and the create resolves the
// siblings' count at apply (issue 10.1).
func TestAccGroup_unknownProviderConfigSkipsPlanChecksAndSaysSo(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("unknowncfg")
	a.createGroupOutOfBand(t, p, "billing", 6)
	config := a.providerConfigUnknownAtPlan() + groupHCL("test", p, "audit")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(groupAddr, tfjsonpath.New("initial_shard_count")),
					plancheck.ExpectUnknownValue(groupAddr, tfjsonpath.New("sibling_shard_counts")),
				},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("initial_shard_count"), knownvalue.Int64Exact(6)),
				statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("sibling_shard_counts"),
					knownvalue.MapExact(map[string]knownvalue.Check{"billing": knownvalue.Int64Exact(6)})),
			},
			Check: a.diags.ExpectWarning("Plan-time checks skipped: the provider configuration is unknown until apply", "(known after apply)"),
		}},
	})
}
