package provider

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestAccMetadataGuard_restoreSurvivesChurn: the group's store is restored
// from a backup taken before Terraform last saw it; consumers then rejoin,
// and every join raises metadataVersion again (CONTRACT §4). The plan fails
// closed naming the version to acknowledge; after more churn, the value
// copied from that first error still acknowledges it, although the
// coordinator reports a higher one by then; a version the coordinator has
// not reached does not; and churn after the acknowledgement leaves the plan
// empty (issue 23 §2).
func TestAccMetadataGuard_restoreSurvivesChurn(t *testing.T) {
	for _, tc := range guardedResources {
		t.Run(tc.name, func(t *testing.T) {
			// Silent members stay live: only the test's joins move the version.
			a := newAccTest(t, acctest.Options{MemberLeaseTTL: time.Minute})
			c := a.env.RequireInRepo(t, "restores the group's stored state from an older copy")
			p, g := acctest.RandomName("restore"), "svc"
			if tc.external {
				a.createGroupOutOfBand(t, p, g, 2)
			}
			var backup coordinator.GroupBackup
			// The backup is of the new group, never joined: metadataVersion 1
			// (CONTRACT §4.2), which the first error names and the user copies.
			const restored = 1
			config := func(extra ...string) string { return a.env.ProviderConfig() + tc.config(p, g, extra...) }
			joins := func(n int) func() { return joinSilentMembers(t, a, p, g, n) }
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: a.factories(),
				Steps: []resource.TestStep{
					{
						Config: config(),
						Check: func(*terraform.State) error {
							var ok bool
							if backup, ok = c.BackupGroup(p, g); !ok || backup.MetadataVersion() != restored {
								return fmt.Errorf("want a backup at metadataVersion %d, got %v (%v)", restored, backup.MetadataVersion(), ok)
							}
							return nil
						},
					},
					// Three consumers join after the backup; the refresh sees them.
					{PreConfig: joins(3), Config: config()},
					{
						PreConfig:   func() { c.RestoreGroup(backup) },
						Config:      config(),
						ExpectError: diagRe("regressed: the plan fails closed", "acknowledged_metadata_version = "+itoa(restored)),
					},
					{
						// A consumer rejoins: the version moves on, still below
						// the old high-water mark.
						PreConfig:   joins(1),
						Config:      config(),
						ExpectError: diagRe("regressed: the plan fails closed"),
					},
					{
						// A version the coordinator has not reached does not acknowledge it.
						Config:      config("acknowledged_metadata_version = 100000"),
						ExpectError: diagRe("regressed: the plan fails closed", "higher than"),
					},
					{
						// The value copied from the first error still acknowledges it.
						Config: config("acknowledged_metadata_version = " + itoa(restored)),
						ConfigPlanChecks: resource.ConfigPlanChecks{
							PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
						},
					},
					{
						// More churn after the acknowledgement changes nothing.
						PreConfig: joins(1),
						Config:    config("acknowledged_metadata_version = " + itoa(restored)),
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

// TestAccMetadataGuard_ackLeftInStateBeforeARestore: an acknowledgement
// applied while nothing had regressed, whose removal was never applied
// (campaign seed 530108553: the apply that would remove it failed on
// another resource), is still in state when the group is restored to that
// very version. It may have been left in the configuration, so it does not
// acknowledge the restore, and since the coordinator reports no other
// version, the error names `terraform state rm` and import as the way out.
// Once a consumer rejoins, the version it reports then acknowledges it
// (issue 23 §2).
func TestAccMetadataGuard_ackLeftInStateBeforeARestore(t *testing.T) {
	for _, tc := range guardedResources {
		t.Run(tc.name, func(t *testing.T) {
			a := newAccTest(t, acctest.Options{MemberLeaseTTL: time.Minute})
			c := a.env.RequireInRepo(t, "restores the group's stored state from an older copy")
			p, g := acctest.RandomName("leftack"), "svc"
			if tc.external {
				a.createGroupOutOfBand(t, p, g, 2)
			}
			var backup coordinator.GroupBackup
			const restored = 1 // the new group's version, never joined (CONTRACT §4.2)
			config := func(extra ...string) string { return a.env.ProviderConfig() + tc.config(p, g, extra...) }
			joins := func(n int) func() { return joinSilentMembers(t, a, p, g, n) }
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: a.factories(),
				Steps: []resource.TestStep{
					{Config: config()},
					{
						// Applied while nothing regressed: no effect, but state holds it.
						Config: config("acknowledged_metadata_version = " + itoa(restored)),
						Check: func(*terraform.State) error {
							var ok bool
							if backup, ok = c.BackupGroup(p, g); !ok || backup.MetadataVersion() != restored {
								return fmt.Errorf("want a backup at metadataVersion %d, got %v (%v)", restored, backup.MetadataVersion(), ok)
							}
							return nil
						},
					},
					{PreConfig: joins(3), Config: config("acknowledged_metadata_version = " + itoa(restored))},
					{
						PreConfig: func() { c.RestoreGroup(backup) },
						Config:    config("acknowledged_metadata_version = " + itoa(restored)),
						ExpectError: diagRe("regressed: the plan fails closed",
							"acknowledged_metadata_version = "+itoa(restored)+" was applied for an earlier regression",
							"No acknowledged_metadata_version can acknowledge this regression", "terraform state rm"),
					},
					{
						// A consumer rejoins: the version it reports now acknowledges it.
						PreConfig: joins(1),
						Config:    config("acknowledged_metadata_version = " + itoa(restored+1)),
						ConfigPlanChecks: resource.ConfigPlanChecks{
							PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
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

// joinSilentMembers is a PreConfig that joins n silent members to group
// {p, g}: consumer churn that raises its metadataVersion.
func joinSilentMembers(t *testing.T, a *accTest, p, g string, n int) func() {
	return func() {
		for range n {
			a.env.JoinSilentMember(t, p, g)
		}
	}
}
