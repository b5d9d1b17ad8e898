package provider

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestAccMetadataGuard_restoreSurvivesChurn: the group's store is restored
// from a backup taken before Terraform last saw it; consumers then rejoin,
// and every join raises metadataVersion again (CONTRACT §4), back above the
// old high-water mark. The regression, once a refresh saw it, still fails
// the plan closed; the version copied from the error still acknowledges it,
// although the coordinator reports a higher one by then; and the next plan
// is empty (issue 23 §2).
func TestAccMetadataGuard_restoreSurvivesChurn(t *testing.T) {
	for _, tc := range guardedResources {
		t.Run(tc.name, func(t *testing.T) {
			a := newAccTest(t, acctest.Options{})
			c := a.env.RequireInRepo(t, "restores the group's stored state from an older copy")
			p, g := acctest.RandomName("restore"), "svc"
			if tc.external {
				a.createGroupOutOfBand(t, p, g, 2)
			}
			var backup coordinator.GroupBackup
			var highWater int64
			config := func(extra ...string) string { return a.env.ProviderConfig() + tc.config(p, g, extra...) }
			joinUntilAbove := func(v int64) {
				for i := 0; i < 20; i++ {
					if grp, err := a.group(t, p, g); err == nil && grp.MetadataVersion > v {
						return
					}
					a.env.JoinSilentMember(t, p, g)
				}
				t.Fatalf("joins did not raise the version above %d", v)
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: a.factories(),
				Steps: []resource.TestStep{
					{
						Config: config(),
						Check: func(*terraform.State) error {
							var ok bool
							if backup, ok = c.BackupGroup(p, g); !ok {
								return fmt.Errorf("no group to back up")
							}
							return nil
						},
					},
					{
						// Consumers join after the backup; the refresh sees them.
						PreConfig: func() {
							joinUntilAbove(backup.MetadataVersion() + 1)
							grp, err := a.group(t, p, g)
							if err != nil {
								t.Fatal(err)
							}
							highWater = grp.MetadataVersion
						},
						Config: config(),
					},
					{
						PreConfig:   func() { c.RestoreGroup(backup) },
						Config:      config(),
						ExpectError: diagRe("regressed: the plan fails closed", "acknowledged_metadata_version = "+itoa(backup.MetadataVersion())),
					},
					{
						// Consumers rejoin: the version climbs back above the
						// old high-water mark. The regression stays reported.
						PreConfig:   func() { joinUntilAbove(highWater) },
						Config:      config(),
						ExpectError: diagRe("regressed: the plan fails closed", "acknowledged_metadata_version = "+itoa(backup.MetadataVersion())),
					},
					{
						// A version the coordinator never reported since does not acknowledge it.
						Config:      config("acknowledged_metadata_version = " + itoa(highWater+1000)),
						ExpectError: diagRe("regressed: the plan fails closed", "outside"),
					},
					{
						// The value copied from the first error still acknowledges it.
						Config: config("acknowledged_metadata_version = " + itoa(backup.MetadataVersion())),
						ConfigPlanChecks: resource.ConfigPlanChecks{
							PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
						},
					},
					{
						// More churn after the acknowledgement changes nothing.
						PreConfig: func() { a.env.JoinSilentMember(t, p, g) },
						Config:    config("acknowledged_metadata_version = " + itoa(backup.MetadataVersion())),
						ConfigPlanChecks: resource.ConfigPlanChecks{
							PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
						},
					},
				},
			})
			if sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "DELETE_GROUP", "ROLLBACK_MIGRATION"); len(sent) != 0 {
				t.Fatalf("Terraform mutated a group whose metadata regressed: %+v", sent)
			}
		})
	}
}
