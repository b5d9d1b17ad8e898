package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// betweenPlanAndApply runs f after the step's plan was saved and before it is
// applied (terraform-plugin-testing applies the saved plan file), as another
// actor acting between a reviewed plan and its apply would.
type betweenPlanAndApply func()

func (f betweenPlanAndApply) CheckPlan(context.Context, plancheck.CheckPlanRequest, *plancheck.CheckPlanResponse) {
	f()
}

// coordinatorVersion is the group's metadataVersion as the coordinator
// reports it now.
func (a *accTest) coordinatorVersion(t *testing.T, p, g string) int64 {
	t.Helper()
	grp, err := a.group(t, p, g)
	if err != nil {
		t.Fatalf("read %s/%s: %v", p, g, err)
	}
	return grp.MetadataVersion
}

// metadataVersionMatchesCoordinator: state's metadata_version is what the
// coordinator reports (contract-level: whatever its numbering).
func (a *accTest) metadataVersionMatchesCoordinator(t *testing.T, addr, p, g string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		want := a.coordinatorVersion(t, p, g)
		got := s.RootModule().Resources[addr].Primary.Attributes["metadata_version"]
		if got != fmt.Sprint(want) {
			return fmt.Errorf("state metadata_version = %s, coordinator reports %d", got, want)
		}
		return nil
	}
}

// TestAccGroup_vanishedGroupPlansRecreationAsNewLifecycle: a group deleted
// out of band is not silently re-created: the plan is a replacement whose
// planned values say it starts a new lifecycle (issue 11.8).
func TestAccGroup_vanishedGroupPlansRecreationAsNewLifecycle(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("vanish"), "svc"
	config := a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 3")
	var seen int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("recreation"), knownvalue.Null()),
				},
				Check: func(s *terraform.State) error {
					seen = a.coordinatorVersion(t, p, g)
					return a.metadataVersionMatchesCoordinator(t, groupAddr, p, g)(s)
				},
			},
			{
				PreConfig: func() {
					a.diags.Reset()
					if _, err := a.env.Client().DeleteGroup(ctxT(t), p, g, true, client.Mutation{Reason: "out-of-band delete"}); err != nil {
						t.Fatalf("out-of-band delete: %v", err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionDestroyBeforeCreate),
						plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("recreation").AtMapKey("previous_shard_count"), knownvalue.Int64Exact(3)),
						plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("recreation").AtMapKey("last_metadata_version_seen"),
							knownvalue.Int64Func(func(v int64) error {
								if v != seen {
									return fmt.Errorf("last_metadata_version_seen = %d, want %d", v, seen)
								}
								return nil
							})),
						plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("recreation").AtMapKey("new_lifecycle"),
							knownvalue.StringRegexp(regexp.MustCompile(`vanished.*new lifecycle.*consumers and producers must rejoin as new`))),
						plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("initial_shard_count"), knownvalue.Int64Exact(3)),
						plancheck.ExpectUnknownValue(groupAddr, tfjsonpath.New("metadata_version")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("recreation").AtMapKey("previous_shard_count"), knownvalue.Int64Exact(3)),
				},
				Check: resource.ComposeTestCheckFunc(
					a.expectGroup(p, g, shardCountIs(3)),
					a.metadataVersionMatchesCoordinator(t, groupAddr, p, g),
					// The vanished group's "delete" is a no-op: no ABANDON warning, no DELETE sent.
					a.diags.ExpectNoWarning("Group left on the coordinator"),
				),
			},
		},
	})
	if !acctest.IsReal() {
		var actions []string
		for _, e := range auditEvents(a.env.Coordinator, p) {
			actions = append(actions, e.Action)
		}
		if strings.Join(actions, ",") != "CREATE_GROUP,DELETE_GROUP,CREATE_GROUP" {
			t.Fatalf("audit actions %v; want the create, the out-of-band delete and the re-create only", actions)
		}
	}
}

// TestAccGroup_metadataRegressionFailsClosedUntilAcknowledged: a refresh that
// finds a lower metadataVersion (metadata deleted and recreated, or restored
// from an old backup) fails every plan with the runbook, sends nothing, and
// is left only through acknowledged_metadata_version (issue 11.7).
func TestAccGroup_metadataRegressionFailsClosedUntilAcknowledged(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("regress"), "svc"
	config := a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 2", `deletion_policy = "DELETE"`)
	var high, low int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				// A scale (out of band) raises the group's metadataVersion; the
				// refresh records it privately (the attributes do not follow scales).
				PreConfig: func() { dsScaleOutOfBand(t, a.env, p, 3) },
				Config:    config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("metadata_version"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(2)),
				},
				Check: func(*terraform.State) error {
					if high = a.coordinatorVersion(t, p, g); high <= 1 {
						return fmt.Errorf("the scale did not raise metadataVersion (%d)", high)
					}
					return nil
				},
			},
			{
				// The metadata key is lost and the group recreated by hand: the version goes back.
				PreConfig: func() {
					if _, err := a.env.Client().DeleteGroup(ctxT(t), p, g, true, client.Mutation{Reason: "simulated metadata loss"}); err != nil {
						t.Fatal(err)
					}
					a.createGroupOutOfBand(t, p, g, 3)
					if low = a.coordinatorVersion(t, p, g); low >= high {
						t.Fatalf("recreated group reports metadataVersion %d, not below %d", low, high)
					}
				},
				Config: config,
				ExpectError: regexp.MustCompile(`(?s)Metadata of group .* regressed: the plan fails closed.*` +
					`seen\s+metadataVersion\s+\d+.*then\s+reported\s+metadataVersion\s+\d+.*Stop admin mutations.*Restore.*` +
					`recreate the group explicitly.*new lifecycle.*Never rebuild the metadata from clients' caches.*` +
					`acknowledged_metadata_version = \d+.*terraform state rm`),
			},
			{
				// Destroying (deletion_policy = "DELETE" would send a DELETE) fails closed too.
				Config:      config,
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)Metadata of group .* regressed: the plan fails closed`),
			},
			{
				// A wrong acknowledgement keeps failing.
				Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 2", `deletion_policy = "DELETE"`,
					"acknowledged_metadata_version = 999"),
				ExpectError: regexp.MustCompile(`acknowledged_metadata_version\s+is\s+999,\s+higher\s+than\s+1,\s+the\s+version\s+the\s+coordinator\s+reports\s+now`),
			},
			{
				// The explicit way out: acknowledge the reported version; it becomes the new baseline.
				// A re-created group starts at metadataVersion 1 (CONTRACT §4.2).
				Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 2", `deletion_policy = "DELETE"`,
					"acknowledged_metadata_version = 1"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("acknowledged_metadata_version"), knownvalue.Int64Exact(1)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: a.metadataVersionMatchesCoordinator(t, groupAddr, p, g),
			},
		},
	})
	if !acctest.IsReal() {
		// Terraform itself made two mutations: the first create, and the
		// delete of the test's final destroy, after the acknowledgement.
		var tf []string
		for _, e := range auditEvents(a.env.Coordinator, p) {
			if strings.HasPrefix(e.RequestID, "terraform-") {
				tf = append(tf, e.Action)
			}
		}
		if strings.Join(tf, ",") != "CREATE_GROUP,DELETE_GROUP" {
			t.Fatalf("terraform's mutations %v; want the first CREATE_GROUP and the final DELETE_GROUP only", tf)
		}
	}
}
