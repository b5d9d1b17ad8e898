package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// endpointReplaced is a configuration of providerConfigUnknownAtPlan whose
// terraform_data is replaced by the next plan, so that the provider's
// endpoint is unknown again while resources of the provider are in state: a
// coordinator deployed by the same configuration being redeployed.
func endpointReplaced(config, generation string) string {
	const block = `resource "terraform_data" "endpoint" {`
	return strings.Replace(config, block, block+"\n  triggers_replace = \""+generation+"\"", 1)
}

// TestAccUnconfiguredProvider_resourcesInState: a plan whose provider
// configuration is unknown while a group and its shard count are in state
// refreshes neither (there is no coordinator to ask), says so, and plans no
// change for them; it used to crash the provider ("Plugin did not respond").
func TestAccUnconfiguredProvider_resourcesInState(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("unconfstate"), "svc"
	config := a.providerConfigUnknownAtPlan() + groupHCL("test", p, g, "initial_shard_count = 2") +
		shardCountHCL("test", p, g, 2, "depends_on = [redisstreamcoordinator_group.test]")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				Config: endpointReplaced(config, "2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("terraform_data.endpoint", plancheck.ResourceActionReplace),
					plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionNoop),
				}},
				Check: resource.ComposeTestCheckFunc(
					a.diags.ExpectWarning("Group not refreshed", "known only after apply"),
					a.diags.ExpectWarning("Shard count not refreshed", "known only after apply"),
					a.expectGroup(p, g, shardCountIs(2)),
				),
			},
		},
	})
}

// Every data source, read while planning with a provider configuration
// unknown until apply, fails the plan saying why and what to do (a data
// source has no state to keep, and Terraform reads it during the plan): none
// crashes, and none asks a coordinator it has no client for.
func TestAccUnconfiguredProvider_dataSources(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("unconfds"), "svc"
	group := fmt.Sprintf("stream_prefix = %q\n  consumer_group = %q", p, g)
	sources := map[string]string{
		"group": group, "groups": "", "producer_routing": group, "assignments": group,
		"migrations": group, "members": group, "health": "", "compatibility": "",
	}
	var config strings.Builder
	config.WriteString(a.providerConfigUnknownAtPlan())
	for _, name := range sortedKeys(sources) {
		fmt.Fprintf(&config, "\ndata \"redisstreamcoordinator_%s\" \"test\" {\n  %s\n}\n", name, sources[name])
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:      config.String(),
			ExpectError: regexp.MustCompile(`Provider configuration unknown`),
		}},
	})
	unknown := 0
	for _, e := range a.diags.Errors() {
		if strings.HasPrefix(e, "Provider configuration unknown: ") && strings.Contains(e, "endpoint") {
			unknown++
		}
	}
	if unknown != len(sources) {
		t.Errorf("want each of the %d data sources to say the provider configuration is unknown, got %d: %q", len(sources), unknown, a.diags.Errors())
	}
}

// The token ephemeral resource, opened while planning with a provider
// configuration unknown until apply, fails saying why.
func TestAccUnconfiguredProvider_ephemeralResource(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	const requirement = "required_providers {\n"
	config := strings.Replace(a.providerConfigUnknownAtPlan(), requirement,
		requirement+fmt.Sprintf("    echo = { source = \"%s/echo\" }\n", acctest.ProviderNamespace), 1) + `
ephemeral "redisstreamcoordinator_token" "test" {}

provider "echo" {
  data = ephemeral.redisstreamcoordinator_token.test
}

resource "echo" "token" {}
`
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_10_0)},
		ProtoV6ProviderFactories: tokenFactories(),
		Steps: []resource.TestStep{{
			Config:      config,
			ExpectError: diagRe("Provider configuration unknown", "A token is requested now", "endpoint"),
		}},
	})
}

// A list block queried with a provider configuration that depends on a
// resource not yet created fails saying why (Terraform 1.14+).
func TestAccUnconfiguredProvider_listResources(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("unconflist")
	a.createGroupOutOfBand(t, p, "svc", 2)
	config := a.providerConfigUnknownAtPlan()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		TerraformVersionChecks: []tfversion.TerraformVersionCheck{
			tfversion.SkipBelow(tfversion.Version1_14_0), // list resources; OpenTofu (1.12) reports its own version and skips
		},
		Steps: []resource.TestStep{
			// Planned, not applied: terraform_data.endpoint does not exist.
			{Config: config, PlanOnly: true, ExpectNonEmptyPlan: true},
			{
				Query: true,
				Config: fmt.Sprintf(`
list "redisstreamcoordinator_group" "test" {
  provider = redisstreamcoordinator
  config {
    stream_prefix = %[1]q
  }
}

list "redisstreamcoordinator_group_shard_count" "test" {
  provider = redisstreamcoordinator
  config {
    stream_prefix = %[1]q
  }
}
`, p),
				ExpectError: diagRe("Provider configuration unknown", "The list block cannot be queried", "endpoint"),
			},
		},
	})
}

// The delete_group action's plan with a provider configuration unknown at
// plan time says it cannot preview the invocation; the invocation, run with
// the configured provider, deletes the group (the rollback action's twin is
// TestAccRollbackMigrationAction_unknownProviderConfigSaysSo).
func TestAccUnconfiguredProvider_deleteGroupAction(t *testing.T) {
	skipUnlessActions(t)
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("unconfdel"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   actionsVersionChecks,
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.providerConfigUnknownAtPlan() + deleteTriggerHCL("trigger", p, g, "test: unknown provider configuration"),
			Check: resource.ComposeTestCheckFunc(
				a.diags.ExpectWarning(deleteGroupTypeName+": cannot show what the invocation will do", "endpoint", "known only after apply"),
				a.groupGone(p, g),
			),
		}},
	})
}

// The shard count's plan with an unconfigured provider, when its last
// refresh saw a migration under way to its count (an update that waits,
// group_shard_count_under_way.go), plans no change instead of reading the
// coordinator for the preview (which crashed the provider): the refresh
// that would show the migration is skipped and says so.
func TestAccUnconfiguredProvider_shardCountWithMigrationUnderWay(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "keeps a scale-in DRAINING with an undrained shard")
	p, g := acctest.RandomName("unconfway"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	config := func(n int, waitFor string) string {
		return a.providerConfigUnknownAtPlan() + shardCountHCL("test", p, g, n, fmt.Sprintf("wait_for = %q", waitFor))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(4, "COMPLETION")},
			{
				// Another actor scales in; a removed shard keeps a backlog, so
				// the migration stays DRAINING. With wait_for = "ACCEPTED"
				// nothing waits for it, and the refresh records it.
				PreConfig: func() {
					c.SetUndrainedShard(p, g, 3, true)
					scaleOutOfBand(t, a, p, 2)
					waitForGroup(t, a, p, g, func(grp *client.Group) bool {
						return grp.ActiveMigration != nil && grp.ActiveMigration.State == client.MigrationDraining
					})
				},
				Config: config(2, "ACCEPTED"),
				Check:  resource.TestCheckResourceAttr(shardCountAddr, "migration_state", "DRAINING"),
			},
			{
				// With wait_for = "COMPLETION" the plan may be an update that
				// waits for the migration: the unconfigured plan leaves what
				// that update sets unknown, and the apply, configured, waits.
				// The shard drains meanwhile.
				PreConfig: func() { c.SetUndrainedShard(p, g, 3, false) },
				Config:    endpointReplaced(config(2, "COMPLETION"), "2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("terraform_data.endpoint", plancheck.ResourceActionReplace),
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding")),
				}},
				Check: resource.ComposeTestCheckFunc(
					a.diags.ExpectWarning("Shard count not refreshed", "known only after apply"),
					a.diags.ExpectWarning("may still be under way", "known only after apply"),
					resource.TestCheckResourceAttr(shardCountAddr, "migration_state", "DEPRECATED"),
				),
			},
		},
	})
}

// A regression that a refresh recorded in state fails a plan with an
// unconfigured provider closed, as it fails every plan: the metadata guard
// decides from state, with no coordinator to ask, so an unknown provider
// configuration neither defers nor skips it (a plan that passed would apply
// the other resources' changes while the group stays unrepaired, the
// runbook's step 2). The acknowledgement the error names still lets it
// through (campaign seed 530108562, where the campaign took this failure for
// a plan the unknown configuration broke).
func TestAccUnconfiguredProvider_recordedRegressionFailsClosed(t *testing.T) {
	a := newAccTest(t, acctest.Options{MemberLeaseTTL: time.Minute})
	c := a.env.RequireInRepo(t, "restores the group's stored state from an older copy")
	p, g := acctest.RandomName("unconfreg"), "svc"
	config := func(extra ...string) string {
		return a.providerConfigUnknownAtPlan() + groupHCL("test", p, g, append([]string{"initial_shard_count = 2"}, extra...)...)
	}
	var backup coordinator.GroupBackup
	// The versions the coordinator reports after the joins and after the
	// restore: the test sets them, so that the steps can name them.
	const joined, restored = 1000, 500
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config()},
			{
				// Consumers join; the refresh records the higher version (in
				// private state: the attribute is not raised by a refresh).
				PreConfig: func() {
					var ok bool
					if backup, ok = c.BackupGroup(p, g); !ok {
						t.Fatal("no group to back up")
					}
					for range 3 {
						a.env.JoinSilentMember(t, p, g)
					}
					now, _ := c.BackupGroup(p, g)
					c.RestoreGroup(now.WithMetadataVersion(joined))
				},
				RefreshState: true,
			},
			{
				// The group is restored from the backup: the refresh-only
				// (the runbook's first step) records the regression, and the
				// plan after it fails closed.
				PreConfig:    func() { c.RestoreGroup(backup.WithMetadataVersion(restored)) },
				RefreshState: true,
				ExpectError:  diagRe("regressed: the plan fails closed"),
			},
			{
				// The endpoint is unknown again: the refresh is skipped, and
				// the recorded regression still fails the plan closed.
				Config:      endpointReplaced(config(), "2"),
				ExpectError: diagRe("regressed: the plan fails closed", "Runbook", "acknowledged_metadata_version"),
			},
			{
				// The acknowledgement the error names lets the plan through,
				// the endpoint still unknown.
				Config: endpointReplaced(config(fmt.Sprintf("acknowledged_metadata_version = %d", restored)), "2"),
				Check: func(*terraform.State) error {
					if sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "DELETE_GROUP", "ROLLBACK_MIGRATION"); len(sent) != 0 {
						return fmt.Errorf("Terraform mutated a group whose metadata regressed: %+v", sent)
					}
					return nil
				},
			},
		},
	})
}
