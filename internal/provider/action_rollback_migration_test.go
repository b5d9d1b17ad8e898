package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// actionTriggerHCL is an action of type actionType with the given config
// lines, invoked after terraform_data.<trigger> is created: the way
// terraform-plugin-testing (which has no -invoke) runs an action.
func actionTriggerHCL(actionType, trigger string, config ...string) string {
	return fmt.Sprintf(`
action %[1]q "test" {
  config {
    %[2]s
  }
}

resource "terraform_data" %[3]q {
  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.%[1]s.test]
    }
  }
}
`, actionType, strings.Join(config, "\n    "), trigger)
}

// wrappedError matches an error Terraform wrapped to its terminal width:
// each space of pattern matches any run of white space.
func wrappedError(pattern string) *regexp.Regexp {
	return regexp.MustCompile(strings.ReplaceAll(pattern, " ", `\s+`))
}

func rollbackTriggerHCL(trigger, p, g, reason string) string {
	lines := []string{fmt.Sprintf("stream_prefix = %q", p), fmt.Sprintf("reason = %q", reason)}
	if g != "" {
		lines = append(lines, fmt.Sprintf("consumer_group = %q", g))
	}
	return actionTriggerHCL(rollbackMigrationTypeName, trigger, lines...)
}

// An action_trigger rolls back every ACTIVE migration of a prefix, each
// group by its own reshardingId, audited with the WRITE principal, the
// provider's requestedBy and the action's reason; the plan previewed it.
func TestAccRollbackMigrationAction_trigger(t *testing.T) {
	skipUnlessActions(t)
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("rbtrigger")
	a.createGroupOutOfBand(t, p, "a", 2)
	a.createGroupOutOfBand(t, p, "b", 2)
	scaleOutOfBand(t, a, p, 4) // no consumers: both stay ACTIVE
	const reason = "test: the scale-out overloads the consumers"
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   actionsVersionChecks,
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + rollbackTriggerHCL("trigger", p, "", reason),
			Check: resource.ComposeTestCheckFunc(
				a.expectGroup(p, "a", shardCountIs(2)),
				a.expectGroup(p, "b", shardCountIs(2)),
				a.diags.ExpectWarning(fmt.Sprintf("The invocation will roll back 2 migration(s) of stream prefix %q", p), `group "a": migration reshard-`, "2→4 shards, ACTIVE since"),
				a.diags.ExpectProgress(`Migration reshard-`, `of group "b" is ROLLED_BACK`, "the group has 2 shards again"),
				a.diags.ExpectProgress(fmt.Sprintf("Rolled back stream prefix %q", p)),
				a.diags.ExpectWarning("Rolled back the resharding", p+":2.."+p+":3) are stranded"),
			),
		}},
	})
	if c := a.env.Coordinator; c != nil {
		expectAuditedAction(t, c, p, coordinator.ActionRollbackMigration, a.env.Writer.Username, 2, "terraform", reason)
	}
}

// A migration that is not ACTIVE cannot be rolled back. Prefix-wide, the
// action refuses before sending anything; for a named group it sends the
// rollback and reports the coordinator's own refusal (422
// ROLLBACK_NOT_ALLOWED and its reason), which the coordinator audits.
func TestAccRollbackMigrationAction_notActiveIsRefused(t *testing.T) {
	skipUnlessActions(t)
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "holds a scale-in in DRAINING with an undrained shard")
	p, g := acctest.RandomName("rbdraining"), "svc"
	a.createGroupOutOfBand(t, p, g, 4)
	c.SetUndrainedShard(p, g, 3, true)
	scaleOutOfBand(t, a, p, 3) // held in DRAINING
	const reason = "test: too late"
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   actionsVersionChecks,
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config: a.env.ProviderConfig() + rollbackTriggerHCL("prefix", p, "", reason),
				ExpectError: wrappedError(`(?s)The invocation will refuse to roll back stream prefix "` + p + `".*` +
					`group "svc": migration reshard-\S+, 4→3 shards, DRAINING since .*DRAINING: consumers are already draining.*` +
					`Nothing was sent to the coordinator`),
			},
			{
				PreConfig: func() {
					if sent := auditEvents(c, p, coordinator.ActionRollbackMigration); len(sent) != 0 {
						t.Fatalf("the prefix-wide refusal sent %d rollback(s)", len(sent))
					}
				},
				Config: a.env.ProviderConfig() + rollbackTriggerHCL("group", p, g, reason),
				ExpectError: wrappedError(`(?s)The coordinator refused to roll back migration reshard-\S+ of group "svc".*` +
					`answered 422 UNPROCESSABLE_ENTITY with errorCode ROLLBACK_NOT_ALLOWED.*` +
					`Rollback is allowed only for the active migration in state ACTIVE; reshard-\S+ is DRAINING.*` +
					`Request id: terraform-.*DRAINING: consumers are already draining.*Nothing was rolled back`),
			},
		},
	})
	refused := auditEvents(c, p, coordinator.ActionRollbackMigration)
	if len(refused) != 1 || refused[0].Status != 422 || deref(refused[0].Reason) != reason || refused[0].Principal != a.env.Writer.Username {
		t.Fatalf("rollback audit events: %+v, want one 422 with the action's reason by %s", refused, a.env.Writer.Username)
	}
	if grp, err := a.group(t, p, g); err != nil || grp.ActiveMigration == nil || grp.ActiveMigration.State != "DRAINING" {
		t.Fatalf("the migration must still be DRAINING: %+v, %v", grp, err)
	}
}

// The answer to a rollback is lost (the connection is reset): the action
// reads the migration back and, when the rollback was applied, succeeds; when
// it was not, it sends it again with the same request id. Either way the
// coordinator audits one rollback.
func TestAccRollbackMigrationAction_lostAnswerIsReadBack(t *testing.T) {
	skipUnlessActions(t)
	for _, tc := range []struct {
		name     string
		kind     coordinator.FaultKind
		progress []string
	}{
		{"applied", coordinator.FaultResetAfterApply, []string{"The answer to the rollback of migration reshard-", "was lost (",
			"reading it back found it ROLLED_BACK, so the rollback was applied"}},
		{"not applied", coordinator.FaultResetBeforeApply, []string{`Migration reshard-`, `of group "svc" is ROLLED_BACK`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAccTest(t, acctest.Options{})
			c := a.env.RequireInRepo(t, "resets the rollback's connection")
			p, g := acctest.RandomName("rblost"), "svc"
			a.createGroupOutOfBand(t, p, g, 2)
			scaleOutOfBand(t, a, p, 3)
			c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteRollback, Kind: tc.kind, Times: 1})
			resource.ParallelTest(t, resource.TestCase{
				TerraformVersionChecks:   actionsVersionChecks,
				ProtoV6ProviderFactories: a.factories(),
				Steps: []resource.TestStep{{
					Config: a.env.ProviderConfig() + rollbackTriggerHCL("trigger", p, g, "test: lost answer"),
					Check: resource.ComposeTestCheckFunc(
						a.expectGroup(p, g, shardCountIs(2)),
						a.diags.ExpectProgress(tc.progress...),
						a.diags.ExpectProgress(`of group "svc" is ROLLED_BACK`),
					),
				}},
			})
			events := auditEvents(c, p, coordinator.ActionRollbackMigration)
			if len(events) != 1 {
				t.Fatalf("%d rollback audit event(s), want the one rollback the coordinator carried out: %+v", len(events), events)
			}
			for _, e := range events {
				if e.RequestID != events[0].RequestID || e.Outcome != coordinator.OutcomeSuccess {
					t.Errorf("rollback audit event %s %s (%s): every attempt must carry the one operation's request id %s and succeed",
						e.RequestID, e.Outcome, deref(e.Reason), events[0].RequestID)
				}
			}
		})
	}
}

// With nothing in progress the action fails (what it was asked to undo has
// completed, or never started), unless the latest migration is already
// rolled back: then it succeeds without sending anything.
func TestAccRollbackMigrationAction_nothingToRollBack(t *testing.T) {
	skipUnlessActions(t)
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("rbnothing"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   actionsVersionChecks,
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config: a.env.ProviderConfig() + rollbackTriggerHCL("never", p, "", "test: nothing"),
				ExpectError: wrappedError(`(?s)Nothing to roll back: stream prefix "` + p + `" has no migration in progress.*` +
					`group "svc" \(2 shards, never resharded\).*A completed \(DEPRECATED\) migration cannot be rolled back`),
			},
			{
				PreConfig: func() {
					scaleOutOfBand(t, a, p, 3)
					grp, err := a.group(t, p, g)
					if err != nil || grp.ActiveMigration == nil {
						t.Fatalf("no active migration: %v", err)
					}
					if _, err := a.env.Client().RollbackMigration(ctxT(t), p, g, grp.ActiveMigration.ReshardingID, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
				},
				Config: a.env.ProviderConfig() + rollbackTriggerHCL("again", p, g, "test: already done"),
				Check: a.diags.ExpectProgress(fmt.Sprintf(`Nothing to send: the resharding of group "svc" under stream prefix %q is already rolled back`, p),
					"2→3 shards, ROLLED_BACK since"),
			},
		},
	})
	if c := a.env.Coordinator; c != nil {
		if sent := terraformMutations(c, p, coordinator.ActionRollbackMigration); len(sent) != 0 {
			t.Fatalf("the action sent %d rollback(s), want none", len(sent))
		}
	}
}

// With an endpoint known only after apply, the plan cannot read the
// coordinator: it says so instead of a preview, and the invocation, run with
// the configured provider, rolls back as usual.
func TestAccRollbackMigrationAction_unknownProviderConfigSaysSo(t *testing.T) {
	skipUnlessActions(t)
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("rbunknown"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	scaleOutOfBand(t, a, p, 3)
	config := a.providerConfigUnknownAtPlan()
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   actionsVersionChecks,
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: config + rollbackTriggerHCL("trigger", p, g, "test: unknown provider configuration"),
			Check: resource.ComposeTestCheckFunc(
				a.diags.ExpectWarning(rollbackMigrationTypeName+": cannot show what the invocation will do", "endpoint", "known only after apply"),
				a.diags.ExpectProgress(`of group "svc" is ROLLED_BACK`),
				a.expectGroup(p, g, shardCountIs(2)),
			),
		}},
	})
}

// A group deleted between the listing and the read of its migrations (404
// GROUP_NOT_FOUND) has nothing left to roll back: the survey skips it and
// says so, and the rollback of the other groups goes on.
func TestAccRollbackMigrationAction_groupDeletedWhileSurveyedIsSkipped(t *testing.T) {
	skipUnlessActions(t)
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "deletes a group exactly when the action reads its migrations")
	p := acctest.RandomName("rbgone")
	a.createGroupOutOfBand(t, p, "a", 2)
	a.createGroupOutOfBand(t, p, "b", 2)
	scaleOutOfBand(t, a, p, 3) // no consumers: both stay ACTIVE
	grp, err := a.group(t, p, "a")
	if err != nil || grp.ActiveMigration == nil {
		t.Fatalf("no active migration: %v", err)
	}
	// "a" rolled back by another actor: the survey reads its history.
	if _, err := a.env.Client().RollbackMigration(ctxT(t), p, "a", grp.ActiveMigration.ReshardingID, outOfBandMutation()); err != nil {
		t.Fatal(err)
	}
	c.InjectFault(coordinator.Fault{Method: "GET", Path: "/coord/v1/monitoring/streams/" + p + "/groups/a/migrations", Kind: coordinator.FaultDelay,
		OnMatch: func() {
			if _, err := a.env.Client().DeleteGroup(ctxT(t), p, "a", false, outOfBandMutation()); err != nil {
				t.Errorf("deleting group a: %v", err)
			}
		}})
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   actionsVersionChecks,
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + rollbackTriggerHCL("trigger", p, "", "test: a group goes meanwhile"),
			Check: resource.ComposeTestCheckFunc(
				a.expectGroup(p, "b", shardCountIs(2)),
				a.diags.ExpectWarning(fmt.Sprintf("The invocation will roll back 1 migration(s) of stream prefix %q", p),
					`Skipped, deleted while the action read the prefix (404 GROUP_NOT_FOUND for its migrations): group(s) ["a"]`),
				a.diags.ExpectProgress(fmt.Sprintf("Rolled back stream prefix %q", p)),
			),
		}},
	})
}
