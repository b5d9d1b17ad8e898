package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// guardedResources are the two resources the metadata guard protects.
var guardedResources = []struct {
	name     string
	addr     string
	external bool // the group is created out of band, not by the configuration
	config   func(p, g string, extra ...string) string
}{
	{"group", groupAddr, false, func(p, g string, extra ...string) string {
		return groupHCL("test", p, g, append([]string{"initial_shard_count = 2"}, extra...)...)
	}},
	{"shard count", shardCountAddr, true, func(p, g string, extra ...string) string {
		return shardCountHCL("test", p, g, 2, extra...)
	}},
}

// TestAccMetadataGuard_epochsBackwardsFailClosed: a store copy whose epochs
// went backwards at the same metadataVersion (a corrupted copy: on a
// conformant coordinator every change that raises the epochs raises the
// version too, CONTRACT §4) fails both resources closed like a version
// regression, and acknowledging the reported version lets them through
// (issue 20, part 5). A consumer's join, which raises the version and the
// epochs, is no regression.
func TestAccMetadataGuard_epochsBackwardsFailClosed(t *testing.T) {
	for _, tc := range guardedResources {
		t.Run(tc.name, func(t *testing.T) {
			a := newAccTest(t, acctest.Options{})
			c := a.env.RequireInRepo(t, "restores a corrupted copy of the group's stored state")
			p, g := acctest.RandomName("epochs"), "svc"
			if tc.external {
				a.createGroupOutOfBand(t, p, g, 2)
			}
			var backup coordinator.GroupBackup
			// The version Terraform sees after the join: the test sets it, so
			// that the step configurations can name it.
			const joined = 1000
			config := func(extra ...string) string { return a.env.ProviderConfig() + tc.config(p, g, extra...) }
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: a.factories(),
				Steps: []resource.TestStep{
					{Config: config()},
					{
						// A consumer joins: the version and the epochs rise.
						PreConfig: func() {
							var ok bool
							if backup, ok = c.BackupGroup(p, g); !ok {
								t.Fatal("no group to back up")
							}
							a.env.JoinSilentMember(t, p, g)
							grp, err := a.group(t, p, g)
							if err != nil || grp.MetadataVersion <= backup.MetadataVersion() || grp.GroupEpoch <= 1 {
								t.Fatalf("a join must raise the version and the epochs: %+v %v", grp, err)
							}
							// Later changes (more joins, say) take the version to joined.
							now, _ := c.BackupGroup(p, g)
							c.RestoreGroup(now.WithMetadataVersion(joined))
						},
						Config: config(),
					},
					{
						// The copy from before the join comes back with the
						// version counter of after it: same version, lower epochs.
						PreConfig:   func() { c.RestoreGroup(backup.WithMetadataVersion(joined)) },
						Config:      config(),
						ExpectError: diagRe("regressed: the plan fails closed", "epochs went backwards", "groupEpoch", "Runbook", "terraform state rm"),
					},
					{
						Config: config(fmt.Sprintf("acknowledged_metadata_version = %d", joined)),
						ConfigPlanChecks: resource.ConfigPlanChecks{
							PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
						},
					},
				},
			})
		})
	}
}
