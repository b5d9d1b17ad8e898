package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

func assignmentsConfig(p, g string) string {
	return fmt.Sprintf(`
data "redisstreamcoordinator_assignments" "this" {
  stream_prefix  = %q
  consumer_group = %q
}
`, p, g)
}

func TestAccAssignmentsDataSource(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	p, g := acctest.RandomName("orders"), acctest.RandomName("svc")
	dsCreateGroup(t, env, p, g, 3)

	const ds = "data.redisstreamcoordinator_assignments.this"
	var consumer *acctest.Consumer
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// No members yet: empty maps and lists, never null, so
				// length() works in conditions.
				Config: env.ProviderConfigAs(env.Reader) + assignmentsConfig(p, g),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("target_assignment"), knownvalue.MapSizeExact(0)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("current_assignments"), knownvalue.MapSizeExact(0)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("revoke_progress"), knownvalue.MapSizeExact(0)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("invariant_violations"), knownvalue.ListSizeExact(0)),
				},
			},
			{
				PreConfig: func() {
					consumer = env.StartConsumer(t, p, g)
					dsWaitForConvergence(t, env, p, g, 1)
				},
				Config: env.ProviderConfigAs(env.Reader) + assignmentsConfig(p, g),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("target_assignment"), memberOwns(func() string { return consumer.MemberID }, 0, 1, 2)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("current_assignments"), memberOwns(func() string { return consumer.MemberID }, 0, 1, 2)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("revoke_progress"), knownvalue.MapSizeExact(0)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("invariant_violations"), knownvalue.ListSizeExact(0)),
				},
			},
			{
				Config:      env.ProviderConfigAs(env.Reader) + assignmentsConfig(p, "no-such-group"),
				ExpectError: wrappedText(fmt.Sprintf(`Group "no-such-group" under stream prefix %q not found`, p)),
			},
		},
	})
}

// memberOwns checks a member → shard indexes map holding one member, whose
// id is only known once the step runs.
func memberOwns(memberID func() string, shards ...int64) knownvalue.Check {
	return lazyCheck{build: func() knownvalue.Check {
		list := make([]knownvalue.Check, 0, len(shards))
		for _, s := range shards {
			list = append(list, knownvalue.Int64Exact(s))
		}
		return knownvalue.MapExact(map[string]knownvalue.Check{memberID(): knownvalue.ListExact(list)})
	}}
}

// lazyCheck builds its check when the value is checked, after PreConfig
// has created what the check refers to.
type lazyCheck struct{ build func() knownvalue.Check }

func (c lazyCheck) CheckValue(v any) error { return c.build().CheckValue(v) }
func (c lazyCheck) String() string         { return "(built at check time)" }

func TestAccAssignmentsDataSource_example(t *testing.T) {
	env := dsExampleEnv(t)
	dsCreateGroup(t, env, "orders", "order-service", 2)
	env.StartConsumer(t, "orders", "order-service")
	dsWaitForConvergence(t, env, "orders", "order-service", 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: dsExampleConfig(t, env, "redisstreamcoordinator_assignments"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orders_revoking_members", knownvalue.ListSizeExact(0)),
			},
		}},
	})
}
