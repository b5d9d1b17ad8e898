package provider

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// The identity import examples, run by TestAccExamples_importByIdentity.
const (
	groupIdentityExample      = "resources/redisstreamcoordinator_group/import-by-identity.tf"
	shardCountIdentityExample = "resources/redisstreamcoordinator_group_shard_count/import-by-identity.tf"
)

func init() {
	examplesTestedElsewhere[groupIdentityExample] = "TestAccExamples_importByIdentity"
	examplesTestedElsewhere[shardCountIdentityExample] = "TestAccExamples_importByIdentity"
	examplesWithoutProviderRequirement[groupIdentityExample] = "goes with resource.tf"
	examplesWithoutProviderRequirement[shardCountIdentityExample] = "goes with resource.tf"
}

// identityIs checks a resource's identity in state.
func identityIs(addr, p, g string) statecheck.StateCheck {
	return statecheck.ExpectIdentity(addr, map[string]knownvalue.Check{
		"stream_prefix": knownvalue.StringExact(p), "consumer_group": knownvalue.StringExact(g),
	})
}

// Both resources record their identity on create, on update and on a
// refresh, and import by it (an import block with identity, Terraform 1.12+
// and OpenTofu 1.12) into a no-op plan with the same identity.
func TestAccGroupIdentity(t *testing.T) {
	a := newAccTest(t, acctest.Options{EveryNewerCLI: true}) // identity: both CLIs store it
	p, g := acctest.RandomName("ident"), "svc"
	// reason is not read back from the coordinator: the import steps use a
	// configuration without it.
	cfg := func(reason string) string {
		r := ""
		if reason != "" {
			r = fmt.Sprintf("reason = %q", reason)
		}
		return a.env.ProviderConfig() +
			groupHCL("test", p, g, "initial_shard_count = 3", r) +
			shardCountHCL("test", p, g, 3, "depends_on = [redisstreamcoordinator_group.test]", r)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		Steps: []resource.TestStep{
			{
				Config:            cfg("first"),
				ConfigStateChecks: []statecheck.StateCheck{identityIs(groupAddr, p, g), identityIs(shardCountAddr, p, g)},
			},
			{
				// Update (Terraform-side settings only) keeps it.
				Config: cfg("second"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{identityIs(groupAddr, p, g), identityIs(shardCountAddr, p, g)},
			},
			{
				Config: cfg(""), ResourceName: groupAddr,
				ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity,
			},
			{
				Config: cfg(""), ResourceName: shardCountAddr,
				ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity,
			},
			{
				// The string id keeps working beside the identity.
				Config: cfg(""), ResourceName: groupAddr,
				ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateId: p + "/" + g,
			},
		},
	})
}

// An identity naming what no coordinator can hold is refused before any
// request, saying which identity attribute is wrong.
func TestAccGroupIdentity_invalidImportIdentity(t *testing.T) {
	a := newAccTest(t, acctest.Options{EveryNewerCLI: true}) // identity: both CLIs store it
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("test", "orders", "svc") + `
import {
  to       = redisstreamcoordinator_group.test
  identity = { stream_prefix = "orders", consumer_group = "a/b" }
}
`,
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Invalid import identity.*identity\.consumer_group: consumer group "a/b" contains '/'`),
		}},
	})
}

// The identity import examples: an existing group imported by identity plans
// only the import (the shard count example then scales, as its string-id
// twin does).
func TestAccExamples_importByIdentity(t *testing.T) {
	groupDir := "resources/redisstreamcoordinator_group/"
	countDir := "resources/redisstreamcoordinator_group_shard_count/"
	for _, c := range []exampleCase{
		{
			name: "group_import_by_identity", files: []string{groupDir + "resource.tf", groupIdentityExample},
			setup:      func(t *testing.T, env *acctest.Env) { createExampleGroup(t, env, ordersPrefix, ordersGroup, 8) },
			planChecks: []plancheck.PlanCheck{expectImported("redisstreamcoordinator_group.orders")},
			stateChecks: []statecheck.StateCheck{
				identityIs("redisstreamcoordinator_group.orders", ordersPrefix, ordersGroup),
			},
		},
		{
			name: "group_shard_count_import_by_identity", files: []string{countDir + "resource.tf", shardCountIdentityExample},
			setup:      ordersGroupWithJoinedConsumer,
			planChecks: []plancheck.PlanCheck{expectImported("redisstreamcoordinator_group_shard_count.orders")},
			stateChecks: []statecheck.StateCheck{
				identityIs("redisstreamcoordinator_group_shard_count.orders", ordersPrefix, ordersGroup),
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			if os.Getenv(resource.EnvTfAcc) == "" {
				t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
			}
			env := acctest.New(t, acctest.Options{EveryNewerCLI: true}) // identity: both CLIs store it
			env.RequireInRepo(t, "examples use fixed names such as orders/order-service, which would collide on a shared coordinator")
			tc := exampleTestCase(t, env, c)
			tc.TerraformVersionChecks = append(tc.TerraformVersionChecks, tfversion.SkipBelow(tfversion.Version1_12_0))
			resource.ParallelTest(t, tc)
		})
	}
}
