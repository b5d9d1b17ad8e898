package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

const groupAddr = "redisstreamcoordinator_group.test"

func TestAccGroup_createImportUpdateAbandon(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("orders"), "order-service"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		// ABANDON: destroy leaves the group on the coordinator.
		CheckDestroy: func(*terraform.State) error {
			if _, err := a.group(t, p, g); err != nil {
				return fmt.Errorf("after destroy with deletion_policy ABANDON the group must remain: %w", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 4"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("id"), knownvalue.StringExact(p+"/"+g)),
					statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(4)),
					statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("initial_shard_count"), knownvalue.Int64Exact(4)),
					statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("stream_key_pattern"), knownvalue.StringExact(p+":{shardIndex}")),
					statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("deletion_policy"), knownvalue.StringExact("ABANDON")),
					statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("force_delete"), knownvalue.Bool(false)),
				},
				Check: a.expectGroup(p, g, shardCountIs(4)),
			},
			{
				ResourceName:            groupAddr,
				ImportState:             true,
				ImportStateId:           p + "/" + g,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// Changing initial_shard_count is an in-place, state-only update that warns.
				Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 8", `reason = "resize request"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(4)),
				},
				Check: resource.ComposeTestCheckFunc(
					a.diags.ExpectWarning("initial_shard_count only applies at creation", "redisstreamcoordinator_group_shard_count"),
					a.expectGroup(p, g, shardCountIs(4)),
				),
			},
		},
	})
	if err := a.diags.ExpectWarning("Group left on the coordinator", `deletion_policy is "ABANDON"`)(nil); err != nil {
		t.Fatal(err)
	}
	if !acctest.IsReal() {
		// The whole lifecycle made exactly one mutation: the create.
		events := auditEvents(a.env.Coordinator, p)
		if len(events) != 1 || events[0].Action != "CREATE_GROUP" {
			t.Fatalf("audit events for %s: %+v; want exactly one CREATE_GROUP", p, events)
		}
	}
}

func TestAccGroup_importBlockThenEmptyPlan(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("payments"), "ledger"
	a.createGroupOutOfBand(t, p, g, 6)
	config := a.env.ProviderConfig() + groupHCL("test", p, g)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config:          config,
				ResourceName:    groupAddr,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   p + "/" + g,
				ImportPlanChecks: resource.ImportPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionNoop),
						plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(6)),
						plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("initial_shard_count"), knownvalue.Int64Exact(6)),
						plancheck.ExpectKnownValue(groupAddr, tfjsonpath.New("deletion_policy"), knownvalue.StringExact("ABANDON")),
					},
				},
			},
			{
				// The same natural config after a CLI import plans nothing.
				Config:             config,
				ResourceName:       groupAddr,
				ImportState:        true,
				ImportStateId:      p + "/" + g,
				ImportStatePersist: true,
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

func TestAccGroup_importMalformedID(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:        a.env.ProviderConfig() + groupHCL("test", "orders", "svc"),
			ResourceName:  groupAddr,
			ImportState:   true,
			ImportStateId: "orders-without-group",
			ExpectError:   regexp.MustCompile(`must have the form\s+\{stream_prefix\}/\{consumer_group\}`),
		}},
	})
}

func TestAccGroup_existingGroupGivesImportHint(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("exists"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 2"),
			// Known at plan time: the plan fails before anything is sent.
			ExpectError: regexp.MustCompile(`(?s)pre-apply plan.*Group already exists.*2 shards, metadataVersion 1.*Nothing was sent.*import \{.*` +
				regexp.QuoteMeta(fmt.Sprintf("id = %q", p+"/"+g)) + `.*terraform import redisstreamcoordinator_group\.<name>`),
		}},
	})
}

func TestAccGroup_streamPrefixAlreadyExistsExplained(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "injects the provisioning conflict that only a Redis-backed coordinator produces")
	p := acctest.RandomName("leftover")
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultRespond, Status: 409,
		ErrorCode: "STREAM_PREFIX_ALREADY_EXISTS", Message: "Redis stream keys already exist for prefix " + p})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:      a.env.ProviderConfig() + groupHCL("test", p, "svc", "initial_shard_count = 2"),
			ExpectError: regexp.MustCompile(`(?s)STREAM_PREFIX_ALREADY_EXISTS.*Redis keys for stream prefix.*REDIS_STREAM_PROVISIONING_FAILED.*redis-cli\s+UNLINK.*choose another\s+stream_prefix`),
		}},
	})
}

func TestAccGroup_lostCreateResponseIsAdopted(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "drops the create response after the coordinator applied it")
	p, g := acctest.RandomName("lost"), "svc"
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultResetAfterApply})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 5"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(5)),
			},
			Check: resource.ComposeTestCheckFunc(
				a.diags.ExpectWarning("Adopted a group whose create response was lost", "still there after", "audit log"),
				func(*terraform.State) error {
					creates := auditEvents(c, p, "CREATE_GROUP")
					if len(creates) != 1 || creates[0].Outcome != "SUCCESS" {
						return fmt.Errorf("want exactly one successful CREATE_GROUP (adopted, not duplicated), got %+v", creates)
					}
					return nil
				},
			),
		}},
	})
}

func TestAccGroup_lostCreateResponseButSomeoneElsesGroup(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "drops the create response and lets another actor create the group")
	p, g := acctest.RandomName("raced"), "svc"
	// The create never reaches the coordinator, but before the provider looks,
	// someone else creates the group with another shard count: the other
	// actor's create runs when the provider's create arrives, before its
	// connection is reset, so it is there whenever the provider looks.
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultResetBeforeApply,
		OnMatch: func() { a.createGroupOutOfBand(t, p, g, 9) }})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 2"),
			ExpectError: regexp.MustCompile(`(?s)Group already exists.*outcome\s+of\s+this\s+create\s+was\s+lost.*exists\s+with\s+9\s+shards.*import \{.*` +
				`deletion_policy\s+=\s+"DELETE"\s+before\s+replacing`),
		}},
	})
}

func TestAccGroup_createResentAfterConnectionLostBeforeApply(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "resets the connection before the coordinator applies the create")
	p, g := acctest.RandomName("resent"), "svc"
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultResetBeforeApply})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("test", p, g, "initial_shard_count = 2"),
			Check: resource.ComposeTestCheckFunc(
				a.expectGroup(p, g, shardCountIs(2)),
				a.diags.ExpectNoWarning("Adopted"),
				func(*terraform.State) error {
					events := auditEvents(c, p)
					if len(events) != 1 || events[0].Outcome != "SUCCESS" || !strings.Contains(events[0].RequestID, "-create-group-") {
						return fmt.Errorf("want one successful create carrying the original request id, got %+v", events)
					}
					return nil
				},
			),
		}},
	})
}

func TestAccGroup_retryAfterPastTheDeadlineFailsAtOnce(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "answers 429 with a Retry-After longer than the create timeout")
	p := acctest.RandomName("patience")
	c.InjectFault(coordinator.Fault{Method: "POST", Route: coordinator.RouteGroup, Kind: coordinator.FaultRespond, Status: 429,
		ErrorCode: "RATE_LIMIT_EXCEEDED", Message: "Coordinator API rate limit exceeded", RetryAfter: "45"})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:      a.env.ProviderConfig() + groupHCL("test", p, "svc", "initial_shard_count = 1", "timeouts {\n    create = \"30s\"\n  }"),
			ExpectError: regexp.MustCompile(`(?s)Not retried: coordinator asked to retry after 45s, which is past the\s+operation deadline.*RATE_LIMIT_EXCEEDED.*Request id: terraform-.*Raise the resource's timeouts`),
		}},
	})
}

func TestAccGroup_inheritsSiblingShardCount(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("siblings")
	a.createGroupOutOfBand(t, p, "billing", 6)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("test", p, "audit"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(6)),
				statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("initial_shard_count"), knownvalue.Int64Exact(6)),
			},
			Check: a.expectGroup(p, "audit", shardCountIs(6)),
		}},
	})
}

func TestAccGroup_siblingShardCountMismatchFailsBeforeCreate(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("mismatch")
	a.createGroupOutOfBand(t, p, "billing", 6)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("test", p, "audit", "initial_shard_count = 4"),
			// The plan fails (issue 10.4): nothing is applied, no other group of the run is created.
			ExpectError: regexp.MustCompile(`(?s)pre-apply plan.*already has group "billing" \(6 shards\).*initial_shard_count = 4.*Nothing was sent`),
		}},
	})
	if _, err := a.group(t, p, "audit"); !client.IsNotFound(err) {
		t.Fatalf("the mismatched group must not have been created; GET answered %v", err)
	}
	if !acctest.IsReal() {
		for _, e := range auditEvents(a.env.Coordinator, p) {
			if e.ConsumerGroup != nil && *e.ConsumerGroup == "audit" {
				t.Fatalf("a create was sent despite the mismatch: %+v", e)
			}
		}
	}
}

func TestAccGroup_siblingsCreatedInOneApplyAgree(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("together")
	// Groups that depend on the one with the explicit count inherit it when
	// they are created, even though plan time saw no siblings at all.
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig() + groupHCL("first", p, "a", "initial_shard_count = 3") +
				groupHCL("second", p, "b", "depends_on = [redisstreamcoordinator_group.first]") +
				groupHCL("third", p, "c", "depends_on = [redisstreamcoordinator_group.first]"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("redisstreamcoordinator_group.second", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(3)),
				statecheck.ExpectKnownValue("redisstreamcoordinator_group.third", tfjsonpath.New("initial_shard_count"), knownvalue.Int64Exact(3)),
			},
			Check: resource.ComposeTestCheckFunc(a.expectGroup(p, "b", shardCountIs(3)), a.expectGroup(p, "c", shardCountIs(3))),
		}},
	})
}

func TestAccGroup_deletionPolicies(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("delete"), "svc"
	withPolicy := func(extra ...string) string {
		return a.env.ProviderConfig() + groupHCL("test", p, g, append([]string{"initial_shard_count = 2"}, extra...)...)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		CheckDestroy: func(*terraform.State) error {
			if _, err := a.group(t, p, g); !client.IsNotFound(err) {
				return fmt.Errorf("after destroy with deletion_policy DELETE and force_delete the group must be gone; GET answered %v", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: withPolicy(`deletion_policy = "DELETE"`)},
			{
				// A live consumer blocks the delete: the destroy fails with the coordinator's code and advice.
				PreConfig: func() {
					a.env.StartConsumer(t, p, g)
					waitForLiveMember(t, a, p, g)
				},
				Config:      withPolicy(`deletion_policy = "DELETE"`),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)GROUP_HAS_ACTIVE_MEMBERS.*Live members: tfacc-member-.*force_delete = true`),
			},
			{
				Config: withPolicy(`deletion_policy = "DELETE"`, "force_delete = true"),
				Check:  a.expectGroup(p, g, shardCountIs(2)),
			},
		},
	})
	if !acctest.IsReal() {
		deletes := auditEvents(a.env.Coordinator, p, "DELETE_GROUP")
		if len(deletes) != 2 || deletes[0].Status != 409 || deletes[1].Outcome != "SUCCESS" || deletes[1].RequestSummary["force"] != "true" {
			t.Fatalf("want a refused delete then a forced one, got %+v", deletes)
		}
	}
}

func TestAccGroup_invalidInputFailsAtPlanWithNoRequest(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	cases := []struct {
		block string
		want  string
	}{
		{groupHCL("test", "bad{tag}", "svc"), `contains a brace`},
		{groupHCL("test", "orders", ".."), `is a dot segment`},
		{groupHCL("test", "orders", "a;b"), `contains ';'`},
		{groupHCL("test", "orders", "a/b"), `contains '/'`},
		{groupHCL("test", "orders", "svc", "initial_shard_count = 0"), `between 1 and 2147483647`},
		// The coordinator's counts are 32-bit ints: one more cannot be sent.
		{groupHCL("test", "orders", "svc", "initial_shard_count = 2147483648"), `between 1 and 2147483647`},
		{groupHCL("test", "orders", "svc", `deletion_policy = "KEEP"`), `value must be one of`},
		{shardCountHCL("test", "orders", "svc", -1), `between 0 and 2147483647`},
		{shardCountHCL("test", "orders", "svc", 2147483648), `between 0 and 2147483647`},
		{shardCountHCL("test", "orders", "svc", 2, `wait_for = "SOMETIMES"`), `value must be one of`},
	}
	var steps []resource.TestStep
	for _, c := range cases {
		steps = append(steps, resource.TestStep{Config: a.env.ProviderConfig() + c.block, PlanOnly: true, ExpectError: regexp.MustCompile(c.want)})
	}
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: a.factories(), Steps: steps})
	if !acctest.IsReal() {
		if counts := a.env.Coordinator.RequestCounts(); len(counts) != 0 {
			t.Fatalf("invalid configurations must fail before any request; the coordinator saw %v", counts)
		}
	}
}

func TestAccGroup_auditRecordsCarryRequestIDRequestedByAndReason(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "reads the coordinator's audit events")
	p := acctest.RandomName("audited")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config: a.env.ProviderConfig(`requested_by = "terraform:platform"`, `run_id = "run-42"`) +
				groupHCL("test", p, "a", "initial_shard_count = 2", `deletion_policy = "DELETE"`) +
				groupHCL("other", p, "b", "initial_shard_count = 2", `requested_by = "alice"`, `reason = "JIRA-1 onboarding"`, `deletion_policy = "DELETE"`) +
				shardCountHCL("scale", p, "a", 1, "depends_on = [redisstreamcoordinator_group.test, redisstreamcoordinator_group.other]"),
		}},
	})
	events := auditEvents(c, p)
	if len(events) != 5 { // two creates, one stream scale, two deletes at destroy
		t.Fatalf("want 5 audit events, got %d: %+v", len(events), events)
	}
	for _, e := range events {
		if e.Outcome != "SUCCESS" || !strings.HasPrefix(e.RequestID, "terraform-run-42-") {
			t.Errorf("event %s %s: outcome %s, request id %q; want SUCCESS and a terraform-run-42- id", e.Action, deref(e.ConsumerGroup), e.Outcome, e.RequestID)
		}
		wantBy, wantReason := "terraform:platform", "terraform apply run-42"
		if e.ConsumerGroup != nil && *e.ConsumerGroup == "b" {
			wantBy, wantReason = "alice", "JIRA-1 onboarding"
		}
		if deref(e.RequestedBy) != wantBy || deref(e.Reason) != wantReason {
			t.Errorf("event %s %s: requestedBy %q reason %q; want %q, %q", e.Action, deref(e.ConsumerGroup), deref(e.RequestedBy), deref(e.Reason), wantBy, wantReason)
		}
	}
}
