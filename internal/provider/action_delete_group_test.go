package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

func deleteTriggerHCL(trigger, p, g, reason string, extra ...string) string {
	lines := append([]string{fmt.Sprintf("stream_prefix = %q", p), fmt.Sprintf("consumer_group = %q", g), fmt.Sprintf("reason = %q", reason)}, extra...)
	return actionTriggerHCL(deleteGroupTypeName, trigger, lines...)
}

// groupGone is a step check: the coordinator no longer has {p, g}.
func (a *accTest) groupGone(p, g string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := a.env.Client().GetGroup(ctx, p, g)
		if !client.IsNotFound(err) {
			return fmt.Errorf("group %s/%s must be gone from the coordinator, read: %v", p, g, err)
		}
		return nil
	}
}

// The group resource's default deletion_policy, ABANDON, leaves the old
// group behind when a change of stream prefix replaces it; the action
// deletes it in the same apply, audited with the WRITE principal and the
// action's own requested_by and reason.
func TestAccDeleteGroupAction_abandonedGroup(t *testing.T) {
	skipUnlessActions(t)
	a := newAccTest(t, acctest.Options{})
	old, moved, g := acctest.RandomName("dgold"), acctest.RandomName("dgnew"), "svc"
	const reason = "test: the group moved to a new stream prefix"
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   actionsVersionChecks,
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: a.env.ProviderConfig() + groupHCL("test", old, g, "initial_shard_count = 3")},
			{
				Config: a.env.ProviderConfig() + groupHCL("test", moved, g, "initial_shard_count = 3") +
					deleteTriggerHCL("cleanup", old, g, reason, `requested_by = "terraform:cleanup"`),
				Check: resource.ComposeTestCheckFunc(
					a.groupGone(old, g),
					a.expectGroup(moved, g, shardCountIs(3)),
					a.diags.ExpectWarning("Group left on the coordinator"),
					a.diags.ExpectWarning(fmt.Sprintf(`The invocation will delete group "svc" under stream prefix %q`, old),
						"Will send DELETE /coord/v1/streams/"+old+"/groups/svc with force = false", "3 shards", "No live members, so force is not needed"),
					a.diags.ExpectProgress(fmt.Sprintf(`Deleted group "svc" under stream prefix %q (request id terraform-`, old)),
				),
			},
		},
	})
	if c := a.env.Coordinator; c != nil {
		expectAuditedAction(t, c, old, coordinator.ActionDeleteGroup, a.env.Writer.Username, 1, "terraform:cleanup", reason)
	}
}

// A READ principal can plan the action but not invoke it: the coordinator's
// 403 comes back with what to do, and nothing is deleted.
func TestAccDeleteGroupAction_readPrincipalIsRefused(t *testing.T) {
	skipUnlessActions(t)
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("dgread"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   actionsVersionChecks,
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfigAs(a.env.Reader) + deleteTriggerHCL("trigger", p, g, "test: read principal"),
			ExpectError: wrappedError(`(?s)Failed to delete group "svc" under stream prefix "` + p + `".*answered 403.*` +
				`lacks the WRITE role.*invoke with one that has the WRITE role. Nothing was deleted`),
		}},
	})
	if _, err := a.group(t, p, g); err != nil {
		t.Fatalf("the group must still exist: %v", err)
	}
	if c := a.env.Coordinator; c != nil {
		events := auditEvents(c, p, coordinator.ActionDeleteGroup)
		if len(events) != 1 || events[0].Outcome != coordinator.OutcomeForbidden || events[0].Principal != a.env.Reader.Username {
			t.Fatalf("delete audit events: %+v, want one FORBIDDEN by %s", events, a.env.Reader.Username)
		}
	}
}

// The same guard as the group resource's destroy: a group with live
// consumers is not deleted (the error names them) unless force = true.
func TestAccDeleteGroupAction_liveMembersNeedForce(t *testing.T) {
	skipUnlessActions(t)
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("dglive"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	// A heartbeating consumer stays live on any coordinator, whatever its lease.
	consumer := a.env.StartConsumer(t, p, g)
	if err := waitJoined(ctxT(t), consumer); err != nil {
		t.Fatal(err)
	}
	member := consumer.MemberID
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   actionsVersionChecks,
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config: a.env.ProviderConfig() + deleteTriggerHCL("unforced", p, g, "test: live members"),
				ExpectError: wrappedError(`(?s)Group "svc" under stream prefix "` + p + `" still has live consumers.*` +
					`409 CONFLICT with errorCode GROUP_HAS_ACTIVE_MEMBERS.*Live members: ` + regexp.QuoteMeta(member) + `.*` +
					`set force = true in the action's config`),
			},
			{
				Config: a.env.ProviderConfig() + deleteTriggerHCL("forced", p, g, "test: live members", "force = true"),
				Check: resource.ComposeTestCheckFunc(
					a.groupGone(p, g),
					a.diags.ExpectWarning("Live members, which fail their next heartbeat: "+member),
					a.diags.ExpectProgress("with force = true; request id terraform-"),
				),
			},
		},
	})
}

// The answer to the delete is lost (the connection is reset after the
// coordinator applied it): the action reads the group back, finds it gone,
// and succeeds without sending the delete again.
func TestAccDeleteGroupAction_lostAnswerIsReadBack(t *testing.T) {
	skipUnlessActions(t)
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "resets the delete's connection after applying it")
	p, g := acctest.RandomName("dglost"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	c.InjectFault(coordinator.Fault{Method: "DELETE", Route: coordinator.RouteGroup, Kind: coordinator.FaultResetAfterApply, Times: 1})
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   actionsVersionChecks,
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + deleteTriggerHCL("trigger", p, g, "test: lost answer"),
			Check: resource.ComposeTestCheckFunc(
				a.groupGone(p, g),
				a.diags.ExpectProgress("The answer to the delete (request id terraform-", "was lost (",
					"reading the group back found it gone, so the delete was applied"),
			),
		}},
	})
	events := auditEvents(c, p, coordinator.ActionDeleteGroup)
	if len(events) != 1 || events[0].Status != 200 {
		t.Fatalf("delete audit events: %+v, want the one delete (200), not sent again", events)
	}
}

// A plan with an action that cannot read the coordinator (here a MEMBER
// principal, refused on every read) fails, as the resources' plans do,
// instead of passing without showing what the invocation will do; nothing is
// sent.
func TestAccActions_planFailsWhenTheCoordinatorCannotBeRead(t *testing.T) {
	skipUnlessActions(t)
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("actread"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	for _, tc := range []struct{ typeName, hcl string }{
		{rollbackMigrationTypeName, rollbackTriggerHCL("trigger", p, g, "test: unreadable")},
		{deleteGroupTypeName, deleteTriggerHCL("trigger", p, g, "test: unreadable")},
	} {
		t.Run(tc.typeName, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				TerraformVersionChecks:   actionsVersionChecks,
				ProtoV6ProviderFactories: a.factories(),
				Steps: []resource.TestStep{{
					Config: a.env.ProviderConfigAs(a.env.Member) + tc.hcl,
					ExpectError: wrappedError(`(?s)` + regexp.QuoteMeta(tc.typeName) + `: the plan cannot show what the invocation will do.*` +
						`403.*Fix the cause above and plan again\. Nothing was sent`),
				}},
			})
		})
	}
	if grp, err := a.group(t, p, g); err != nil || grp.ShardCount != 2 {
		t.Fatalf("the group must be untouched: %+v, %v", grp, err)
	}
}
