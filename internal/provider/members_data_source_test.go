package provider

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Liveness is judged at read time against the lease, not from the state
// alone: an ACTIVE member whose lease ran out is no longer live.
func TestNewMembersModel_liveness(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) client.Time { return client.Time{Time: now.Add(d)} }
	members := []client.Member{
		{MemberID: "m-expired-lease", State: client.MemberActive, MemberLeaseExpiresAt: at(-time.Second),
			CurrentAssignment: []client.ShardID{{ShardIndex: 2}, {ShardIndex: 0}}},
		{MemberID: "m-active", State: client.MemberActive, MemberLeaseExpiresAt: at(10 * time.Second), LastHeartbeatAt: at(-time.Second)},
		{MemberID: "m-fenced", State: client.MemberFenced, MemberLeaseExpiresAt: at(10 * time.Second)},
		{MemberID: "m-starting", State: client.MemberStarting},
	}
	model := newMembersModel("orders", "svc", members, now)

	wantLive := map[string]bool{"m-active": true, "m-expired-lease": false, "m-fenced": false, "m-starting": true}
	if model.LiveCount != 2 {
		t.Errorf("live_count = %d, want 2", model.LiveCount)
	}
	for i, want := range []string{"m-active", "m-expired-lease", "m-fenced", "m-starting"} {
		m := model.Members[i]
		if m.MemberID != want {
			t.Fatalf("members[%d] = %s, want %s (ordered by member_id)", i, m.MemberID, want)
		}
		if m.Live != wantLive[m.MemberID] {
			t.Errorf("%s: live = %v, want %v", m.MemberID, m.Live, wantLive[m.MemberID])
		}
		if m.Revoking == nil || m.GrantedAssignment == nil || m.CurrentAssignment == nil {
			t.Errorf("%s: shard lists must be empty, not null", m.MemberID)
		}
	}
	if got := model.Members[1].CurrentAssignment; len(got) != 2 || got[0] != 0 || got[1] != 2 {
		t.Errorf("current_assignment = %v, want [0 2] (ascending)", got)
	}
	if got := model.Members[0].LastHeartbeatAt.ValueString(); got != "2026-05-01T11:59:59Z" {
		t.Errorf("last_heartbeat_at = %q, want RFC 3339 UTC", got)
	}
	if !model.Members[3].LastHeartbeatAt.IsNull() {
		t.Errorf("a missing timestamp must be null, got %v", model.Members[3].LastHeartbeatAt)
	}
}

func TestAccMembersDataSource(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	p, g := acctest.RandomName("orders"), acctest.RandomName("svc")
	dsCreateGroup(t, env, p, g, 2)
	consumer := env.StartConsumer(t, p, g)
	dsWaitForConvergence(t, env, p, g, 1)

	const ds = "data.redisstreamcoordinator_members.this"
	shards := knownvalue.ListExact([]knownvalue.Check{knownvalue.Int64Exact(0), knownvalue.Int64Exact(1)})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: env.ProviderConfigAs(env.Reader) + fmt.Sprintf(`
data "redisstreamcoordinator_members" "this" {
  stream_prefix  = %q
  consumer_group = %q
}
`, p, g),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("live_count"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("members"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectPartial(map[string]knownvalue.Check{
							"member_id":               knownvalue.StringExact(consumer.MemberID),
							"member_name":             knownvalue.StringExact("tfacc-fake-consumer"),
							"state":                   knownvalue.StringExact("ACTIVE"),
							"live":                    knownvalue.Bool(true),
							"member_epoch":            knownvalue.Int64Func(dsAtLeast(1)),
							"runtime_max_concurrency": knownvalue.Int64Exact(4),
							"current_assignment":      shards,
							"granted_assignment":      shards,
							"revoking":                knownvalue.ListSizeExact(0),
							"last_heartbeat_at":       knownvalue.StringRegexp(dsRFC3339),
							"member_lease_expires_at": knownvalue.StringRegexp(dsRFC3339),
						}),
					})),
				},
			},
			{
				Config: env.ProviderConfigAs(env.Reader) + fmt.Sprintf(`
data "redisstreamcoordinator_members" "this" {
  stream_prefix  = %q
  consumer_group = "no-such-group"
}
`, p),
				ExpectError: wrappedText(fmt.Sprintf(`Group "no-such-group" under stream prefix %q not found`, p)),
			},
		},
	})
}

func TestAccMembersDataSource_example(t *testing.T) {
	env := dsExampleEnv(t)
	dsCreateGroup(t, env, "orders", "order-service", 2)
	consumer := env.StartConsumer(t, "orders", "order-service")
	dsWaitForConvergence(t, env, "orders", "order-service", 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: dsExampleConfig(t, env, "redisstreamcoordinator_members"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orders_live_members", knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact(consumer.MemberID),
				})),
			},
		}},
	})
}
