package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// TestAccMetadataGuard_epochsBackwardsFailClosed: a group restored from a
// backup taken between membership changes has the same metadataVersion and
// lower epochs. Both resources fail closed on it like on a version
// regression, and are let through by acknowledging the reported version
// (issue 20, part 5). Epochs rising with a consumer's join, without a
// version change, are not a regression.
func TestAccMetadataGuard_epochsBackwardsFailClosed(t *testing.T) {
	for _, tc := range []struct {
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAccTest(t, acctest.Options{})
			p, g := acctest.RandomName("epochs"), "svc"
			if tc.external {
				a.createGroupOutOfBand(t, p, g, 2)
			}
			var consumer *acctest.Consumer
			var before *client.Group
			config := func(extra ...string) string { return a.env.ProviderConfig() + tc.config(p, g, extra...) }
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: a.factories(),
				Steps: []resource.TestStep{
					{Config: config()},
					{
						// A consumer joins: the epochs rise, the version does not.
						PreConfig: func() {
							var err error
							if before, err = a.group(t, p, g); err != nil {
								t.Fatal(err)
							}
							consumer = a.env.StartConsumer(t, p, g)
							waitForLiveMember(t, a, p, g)
							waitForGroup(t, a, p, g, func(grp *client.Group) bool {
								return grp.MetadataVersion == before.MetadataVersion && grp.GroupEpoch > before.GroupEpoch
							})
						},
						Config: config(),
					},
					{
						// The group's metadata is restored from a backup taken before the join:
						// deleted and created again, the same version with lower epochs.
						PreConfig: func() {
							consumer.Stop()
							if _, err := a.env.Client().DeleteGroup(ctxT(t), p, g, true, outOfBandMutation()); err != nil {
								t.Fatal(err)
							}
							a.createGroupOutOfBand(t, p, g, 2)
							if now, err := a.group(t, p, g); err != nil || now.MetadataVersion != before.MetadataVersion {
								t.Fatalf("the restored group must have metadataVersion %d: %+v %v", before.MetadataVersion, now, err)
							}
						},
						Config: config(),
						ExpectError: diagRe("regressed: the plan fails closed", "epochs went backwards", "groupEpoch", "Runbook",
							"acknowledged_metadata_version = 1", "terraform state rm"),
					},
					{
						// A new group, never scaled, is at metadataVersion 1 (CONTRACT §4.2).
						Config: config("acknowledged_metadata_version = 1"),
						ConfigPlanChecks: resource.ConfigPlanChecks{
							PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
						},
					},
				},
			})
		})
	}
}
