package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// consumerChurnBeforeApply is a rolling restart between plan and apply: a
// new consumer joins, then the old one leaves. Both raise metadataVersion
// (CONTRACT §4) and change nothing the reviewer saw. It checks that the
// version did move, so the test proves what it claims.
func (a *accTest) consumerChurnBeforeApply(t *testing.T, p, g string, old **acctest.Consumer) plancheck.PlanCheck {
	return checkPlan(func(context.Context, *tfjson.Plan) error {
		before, err := a.group(t, p, g)
		if err != nil {
			return err
		}
		next := a.env.StartConsumer(t, p, g)
		waitForGroup(t, a, p, g, func(grp *client.Group) bool { return grp.MetadataVersion > before.MetadataVersion })
		joined, err := a.group(t, p, g)
		if err != nil {
			return err
		}
		(*old).Stop()
		*old = next
		waitForGroup(t, a, p, g, func(grp *client.Group) bool { return grp.MetadataVersion > joined.MetadataVersion })
		return nil
	})
}

// TestAccPullRequestWorkflow_savedPlanSurvivesConsumerChurn: a shard count
// change planned with -out, then a consumer joins and another leaves (a
// rolling restart), then the saved plan is applied: it applies, because
// nothing the reviewer saw changed, and sends exactly the scale it showed
// (issue 23 §1). The same for a new shard count resource, which Terraform
// plans again during apply from a fresh read: no "inconsistent final plan".
func TestAccPullRequestWorkflow_savedPlanSurvivesConsumerChurn(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing bool // the shard count resource is already in state
	}{{"update", true}, {"create", false}} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAccTest(t, acctest.Options{})
			p, g := acctest.RandomName("churn"), "svc"
			a.createGroupOutOfBand(t, p, g, 4)
			consumer := a.env.StartConsumer(t, p, g)
			waitForLiveMember(t, a, p, g)
			config := func(n int) string { return a.env.ProviderConfig() + shardCountHCL("test", p, g, n) }
			var steps []resource.TestStep
			if tc.existing {
				steps = append(steps, resource.TestStep{Config: config(4)})
			}
			steps = append(steps, resource.TestStep{
				Config: config(8),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					previewFrom(tc.existing, 4),
					a.consumerChurnBeforeApply(t, p, g, &consumer),
				}},
				Check: a.migrationFinished(p, g, 8),
			})
			resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: a.factories(), Steps: steps})
			if c := a.env.Coordinator; c != nil {
				sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION")
				if len(sent) != 1 || sent[0].Action != "SCALE_STREAM" {
					t.Fatalf("want exactly the reviewed stream scale, got %+v", sent)
				}
			}
		})
	}
}

// TestAccPullRequestWorkflow_savedWaitRefusesARolledBackMigration: a saved
// plan that waits for the migration under way and sends no scale, applied
// after that migration was rolled back: the apply refuses it as stale and
// sends nothing; it never sends the scale nobody reviewed (issue 23 §1).
func TestAccPullRequestWorkflow_savedWaitRefusesARolledBackMigration(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("waitrb"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	config := a.env.ProviderConfig() + shardCountHCL("test", p, g, 8)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 4)},
			{
				PreConfig: func() {
					// A member that heartbeats but never takes a shard keeps the
					// scale-out ACTIVE, under way, through plan and apply however
					// slow the machine: its lease never lapses, and with nothing
					// to revoke it is never fenced.
					a.env.StartStalledConsumer(t, p, g)
					scaleOutOfBand(t, a, p, 8)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(shardCountAddr, plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("plan_check"), knownvalue.StringExact(planCheckUnderWay)),
					checkPlan(func(ctx context.Context, _ *tfjson.Plan) error {
						grp, err := a.group(t, p, g)
						if err != nil || grp.ActiveMigration == nil {
							return fmt.Errorf("want a migration under way: %+v %v", grp, err)
						}
						_, err = a.env.Client().RollbackMigration(ctx, p, g, grp.ActiveMigration.ReshardingID, outOfBandMutation())
						return err
					}),
				}},
				ExpectError: diagRe("Stale plan", "ROLLED_BACK", "nothing was sent"),
			},
		},
	})
	if c := a.env.Coordinator; c != nil {
		if sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(sent) != 0 {
			t.Fatalf("the refused apply sent a mutation: %+v", sent)
		}
	}
	if got, err := a.group(t, p, g); err != nil || got.ShardCount != 4 {
		t.Fatalf("the group must stay at the rolled-back 4 shards: %+v %v", got, err)
	}
}

// The same with a sibling: the plan waits for the migration under way in
// both groups, and the sibling's is rolled back between plan and apply.
// Terraform's re-plan during apply (no refresh) builds the preview's
// affected_groups from what the refresh recorded, as the plan did, so the
// apply is refused as stale by the wait, never "Provider produced
// inconsistent final plan".
func TestAccPullRequestWorkflow_savedWaitRefusesASiblingRolledBack(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g, other := acctest.RandomName("waitsib"), "svc", "audit"
	a.createGroupOutOfBand(t, p, g, 4)
	a.createGroupOutOfBand(t, p, other, 4)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 4)},
			{
				PreConfig: func() {
					a.env.StartStalledConsumer(t, p, g)
					a.env.StartStalledConsumer(t, p, other)
					scaleOutOfBand(t, a, p, 8)
				},
				Config: a.env.ProviderConfig() + shardCountHCL("test", p, g, 8),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("plan_check"), knownvalue.StringExact(planCheckUnderWay)),
					plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("affected_groups"),
						knownvalue.MapExact(map[string]knownvalue.Check{g: knownvalue.Int64Exact(8), other: knownvalue.Int64Exact(8)})),
					checkPlan(func(ctx context.Context, _ *tfjson.Plan) error {
						grp, err := a.group(t, p, other)
						if err != nil || grp.ActiveMigration == nil {
							return fmt.Errorf("want a migration under way: %+v %v", grp, err)
						}
						_, err = a.env.Client().RollbackMigration(ctx, p, other, grp.ActiveMigration.ReshardingID, outOfBandMutation())
						return err
					}),
				}},
				ExpectError: diagRe("Stale plan", "no longer under way", `group "audit" now has 4 shards`),
			},
		},
	})
	if c := a.env.Coordinator; c != nil {
		if sent := terraformMutations(c, p, "SCALE_STREAM", "SCALE_GROUP", "ROLLBACK_MIGRATION"); len(sent) != 0 {
			t.Fatalf("the refused apply sent a mutation: %+v", sent)
		}
	}
}

// TestBasisChanges: a version that only moved forward is no change; the
// count, a migration that appeared or was replaced, one rolled back or no
// longer known are; a completed one is not; a lower version is a regression.
func TestBasisChanges(t *testing.T) {
	mig := func(id string, state client.MigrationState) *client.Migration {
		return &client.Migration{ReshardingID: id, FromShardCount: 4, ToShardCount: 8, State: state}
	}
	grp := func(v int64, count int32, am *client.Migration) *client.Group {
		return &client.Group{StreamPrefix: "orders", ConsumerGroup: "svc", MetadataVersion: v, ShardCount: count, ActiveMigration: am}
	}
	lookup := func(state client.MigrationState, err error) migrationLookup {
		return func(context.Context, string, string, string) (*client.Migration, error) {
			if err != nil {
				return nil, err
			}
			return mig("reshard-a", state), nil
		}
	}
	notFound := &client.APIError{HTTPStatus: 404, ErrorCode: "MIGRATION_NOT_FOUND"}
	for _, tc := range []struct {
		name      string
		seen, now *client.Group
		lookup    migrationLookup
		want      string // a fragment of the change; "" for none
		regressed bool
	}{
		{"churn only", grp(3, 4, nil), grp(9, 4, nil), nil, "", false},
		{"churn while a migration progresses", grp(3, 8, mig("reshard-a", client.MigrationActive)), grp(9, 8, mig("reshard-a", client.MigrationDraining)), nil, "", false},
		{"the count changed", grp(3, 4, nil), grp(5, 6, nil), nil, "from 4 to 6", false},
		{"a migration started", grp(3, 4, nil), grp(3, 4, mig("reshard-b", client.MigrationPreparing)), nil, "reshard-b", false},
		{"another migration", grp(3, 8, mig("reshard-a", client.MigrationActive)), grp(6, 8, mig("reshard-b", client.MigrationActive)), nil, "followed by", false},
		{"completed", grp(3, 8, mig("reshard-a", client.MigrationActive)), grp(6, 8, nil), lookup(client.MigrationDeprecated, nil), "", false},
		{"rolled back", grp(3, 8, mig("reshard-a", client.MigrationActive)), grp(6, 8, nil), lookup(client.MigrationRolledBack, nil), "ROLLED_BACK", false},
		{"no longer known", grp(3, 8, mig("reshard-a", client.MigrationActive)), grp(6, 8, nil), lookup("", notFound), "no longer known", false},
		{"regressed", grp(3, 4, nil), grp(1, 4, nil), nil, "", true},
	} {
		changes, regressed, err := basisChanges(context.Background(), tc.lookup, tc.seen, tc.now)
		got := strings.Join(changes, "; ")
		if err != nil || regressed != tc.regressed || (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: changes %q regressed %v err %v; want %q regressed %v", tc.name, got, regressed, err, tc.want, tc.regressed)
		}
	}
	failing := lookup("", errors.New("connection reset"))
	if _, _, err := basisChanges(context.Background(), failing, grp(3, 8, mig("reshard-a", client.MigrationActive)), grp(6, 8, nil)); err == nil {
		t.Error("a failed migration read must be an error, not a verdict")
	}
}

// TestOursTellsTheRunsOwnMoves: a basis comparison leaves out the counts
// this run's own scale sent (a replace's delete that lists the prefix after
// the same apply's stream scale is no stale plan), and keeps another actor's.
func TestOursTellsTheRunsOwnMoves(t *testing.T) {
	at := func(c1, c2 int32) prefix.Record {
		return prefix.FromListing([]client.Group{{StreamPrefix: "p", ConsumerGroup: "g1", ShardCount: c1}, {StreamPrefix: "p", ConsumerGroup: "g2", ShardCount: c2}}, "p")
	}
	pd := &providerData{}
	if pd.ours("p", at(4, 4), at(2, 4))("g1") {
		t.Error("g1 moved 4→2 before this run scaled: another actor's")
	}
	pd.plans.noteScale("p", 2, map[string]int64{"g1": 4, "g2": 4})
	if ours := pd.ours("p", at(4, 4), at(2, 2)); !ours("g1") || !ours("g2") {
		t.Error("g1 and g2 moved 4→2 by this run's scale to 2: the run's own")
	}
	if pd.ours("p", at(4, 4), at(3, 4))("g1") {
		t.Error("g1 at 3 is not where this run's scale to 2 took it")
	}
}

// previewFrom checks a plan's resharding.from_shard_count: an update's is
// the refresh's count, a new resource's preview is known after apply
// (Terraform plans it again then, from a fresh read).
func previewFrom(existing bool, from int64) plancheck.PlanCheck {
	if !existing {
		return plancheck.ExpectUnknownValue(shardCountAddr, tfjsonpath.New("resharding"))
	}
	return plancheck.ExpectKnownValue(shardCountAddr, reshardingPath("from_shard_count"), knownvalue.Int64Exact(from))
}
