package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// regressionRunbook is the metadata guard's plan error.
var regressionRunbook = diagRe("regressed", "had seen metadataVersion", "Runbook", "acknowledged_metadata_version")

// migrationForgottenChecks: the refresh said the recorded migration is
// unknown, and the acknowledged state no longer claims a migration state.
func (a *accTest) migrationForgottenChecks() (resource.TestCheckFunc, []statecheck.StateCheck) {
	return a.diags.ExpectWarning("is unknown to the coordinator", "MIGRATION_NOT_FOUND", "Request id"),
		[]statecheck.StateCheck{
			statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("migration_state"), knownvalue.Null()),
			statecheck.ExpectKnownValue(shardCountAddr, tfjsonpath.New("metadata_version"), knownvalue.Int64Exact(1)),
		}
}

// A group deleted and created again out of band, after this resource
// recorded a migration of it: the refresh no longer fails on the migration
// the coordinator does not know (404 MIGRATION_NOT_FOUND), the plan fails
// closed with the metadata runbook (metadataVersion went back to 1, where
// every new group starts, CONTRACT §4.2), and acknowledging the version gets
// out (issue 24 §2). It used to fail every refresh with "Failed to read
// migration …", so that only terraform state rm got out.
func TestAccGroupShardCount_refreshSurvivesGroupRecreated(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("recreated"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	config := func(extra ...string) string {
		return a.env.ProviderConfig() + shardCountHCL("test", p, g, 4, append([]string{`wait_for = "ACCEPTED"`}, extra...)...)
	}
	warned, stateChecks := a.migrationForgottenChecks()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			// No consumer: the scale-out stays ACTIVE, recorded in state.
			{Config: config(), Check: resource.TestCheckResourceAttr(shardCountAddr, "migration_state", "ACTIVE")},
			{
				PreConfig: func() {
					if _, err := a.env.Client().DeleteGroup(ctxT(t), p, g, true, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
					a.createGroupOutOfBand(t, p, g, 4)
				},
				Config:      config(),
				ExpectError: regressionRunbook,
			},
			{
				Config:            config("acknowledged_metadata_version = 1"),
				Check:             warned,
				ConfigStateChecks: stateChecks,
			},
		},
	})
	if c := a.env.Coordinator; c != nil {
		if sent := terraformMutations(c, p, coordinator.ActionScaleStream, coordinator.ActionScaleGroup); len(sent) != 1 {
			t.Errorf("want the one scale of the first step and none after the group was created again, got %d: %+v", len(sent), sent)
		}
	}
}

// The same for a group whose stored state is restored from an older copy
// (in-repo: a backup taken before the scale): the migration the state
// recorded is unknown to the restored coordinator.
func TestAccGroupShardCount_refreshSurvivesGroupRestored(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "restores a group's stored state from a backup")
	p, g := acctest.RandomName("restored"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	backup, ok := c.BackupGroup(p, g)
	if !ok {
		t.Fatal("no group to back up")
	}
	config := func(n int, extra ...string) string {
		return a.env.ProviderConfig() + shardCountHCL("test", p, g, n, append([]string{`wait_for = "ACCEPTED"`}, extra...)...)
	}
	warned, stateChecks := a.migrationForgottenChecks()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config(4), Check: resource.TestCheckResourceAttr(shardCountAddr, "migration_state", "ACTIVE")},
			{
				PreConfig:   func() { c.RestoreGroup(backup) },
				Config:      config(4),
				ExpectError: regressionRunbook,
			},
			{
				// The other way out: state rm and import again, a new lifecycle
				// (an import into a fresh state here).
				Config:        config(2),
				ResourceName:  shardCountAddr,
				ImportState:   true,
				ImportStateId: p + "/" + g,
			},
			{
				// The restored group has 2 shards: the operator keeps them and
				// acknowledges the backup's version.
				Config:            config(2, "acknowledged_metadata_version = 1"),
				Check:             resource.ComposeTestCheckFunc(warned, a.expectGroup(p, g, shardCountIs(2))),
				ConfigStateChecks: stateChecks,
			},
		},
	})
	if sent := terraformMutations(c, p, coordinator.ActionScaleStream, coordinator.ActionScaleGroup); len(sent) != 1 {
		t.Errorf("want the one scale of the first step and none after the restore, got %d: %+v", len(sent), sent)
	}
}

// GROUP_NOT_FOUND on the read of a recorded migration (the group went
// between the group's read and its migration's) is the same class: the
// refresh records that the migration is unknown instead of failing, and the
// 404 alone, with a metadataVersion that only rose, is a regression: the plan
// fails closed with the runbook (CONTRACT §4: only a delete-and-recreate or
// a restore forgets a migration), and state rm and import gets out. (The
// acknowledgement of such a record is TestAccMetadataGuard_lostMigrationIsARegression.)
func TestAccGroupShardCount_refreshSurvivesGroupNotFoundOnMigrationRead(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "answers the migration read with 404 GROUP_NOT_FOUND")
	p, g := acctest.RandomName("migrationgone"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	config := a.env.ProviderConfig() + shardCountHCL("test", p, g, 4, `wait_for = "ACCEPTED"`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config, Check: resource.TestCheckResourceAttr(shardCountAddr, "migration_state", "ACTIVE")},
			{
				// Rolled back by another actor, so the refresh looks the
				// migration up; that read finds no group. The refresh
				// succeeds (the plan's own check fails it).
				PreConfig: func() {
					grp, err := a.group(t, p, g)
					if err != nil || grp.ActiveMigration == nil {
						t.Fatalf("no active migration to roll back: %v", err)
					}
					if _, err := a.env.Client().RollbackMigration(ctxT(t), p, g, grp.ActiveMigration.ReshardingID, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
					c.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMigration, Kind: coordinator.FaultRespond,
						Status: 404, ErrorCode: "GROUP_NOT_FOUND", Message: "Group not found"})
				},
				Config: config,
				ExpectError: diagRe("regressed: the plan fails closed", "recorded migration", "no longer knows it", "Runbook",
					"set acknowledged_metadata_version = ", "terraform state rm"),
			},
			{
				// The other way out: state rm and import again, a new lifecycle
				// (an import into a fresh state here).
				Config:        config,
				ResourceName:  shardCountAddr,
				ImportState:   true,
				ImportStateId: p + "/" + g,
			},
		},
	})
}
