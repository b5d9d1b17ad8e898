package provider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// dsCreateGroup creates {p, g} directly through the API, as another
// team or tool would.
func dsCreateGroup(t *testing.T, env *acctest.Env, p, g string, shards int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := env.Client().CreateGroup(ctx, p, g, &shards, client.Mutation{}); err != nil {
		t.Fatalf("create group %s/%s: %v", p, g, err)
	}
}

// dsWaitForConvergence waits until the group is STABLE and every member owns
// exactly its target, so data sources read settled values.
func dsWaitForConvergence(t *testing.T, env *acctest.Env, p, g string, members int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	api := env.Client()
	err := client.Poll(ctx, client.PollOptions{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond}, func(ctx context.Context) (bool, error) {
		group, err := api.GetGroup(ctx, p, g)
		if err != nil {
			return false, err
		}
		return group.State == client.GroupStable && len(group.TargetAssignmentSummary) == members &&
			maps.Equal(group.TargetAssignmentSummary, group.CurrentAssignmentSummary), nil
	})
	if err != nil {
		t.Fatalf("group %s/%s did not converge: %v", p, g, err)
	}
}

func groupDataSourceConfig(p, g string) string {
	return fmt.Sprintf(`
data "redisstreamcoordinator_group" "this" {
  stream_prefix  = %q
  consumer_group = %q
}
`, p, g)
}

// The group is created by a resource in the same configuration, so the
// read must wait for the create through the attribute references.
func TestAccGroupDataSource_sameConfiguration(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	p, g := acctest.RandomName("orders"), acctest.RandomName("svc")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: env.ProviderConfig() + fmt.Sprintf(`
resource "redisstreamcoordinator_group" "this" {
  stream_prefix       = %q
  consumer_group      = %q
  initial_shard_count = 4
}

data "redisstreamcoordinator_group" "this" {
  stream_prefix  = redisstreamcoordinator_group.this.stream_prefix
  consumer_group = redisstreamcoordinator_group.this.consumer_group
}
`, p, g),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.this", tfjsonpath.New("id"), knownvalue.StringExact(p+"/"+g)),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.this", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(4)),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.this", tfjsonpath.New("state"), knownvalue.StringExact("EMPTY")),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.this", tfjsonpath.New("group_epoch"), knownvalue.Int64Exact(1)),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.this", tfjsonpath.New("assignment_epoch"), knownvalue.Int64Exact(1)),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.this", tfjsonpath.New("metadata_version"), knownvalue.Int64Exact(1)),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.this", tfjsonpath.New("active_migration"), knownvalue.Null()),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.this", tfjsonpath.New("target_assignment_summary"), knownvalue.MapSizeExact(0)),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.this", tfjsonpath.New("current_assignment_summary"), knownvalue.MapSizeExact(0)),
			},
		}},
	})
}

// A READ principal reads a group with a converged consumer, then the same
// group while a scale-out without consumers keeps its migration ACTIVE.
func TestAccGroupDataSource_readPrincipal(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	p, g := acctest.RandomName("orders"), acctest.RandomName("svc")
	dsCreateGroup(t, env, p, g, 2)
	consumer := env.StartConsumer(t, p, g)
	dsWaitForConvergence(t, env, p, g, 1)

	const ds = "data.redisstreamcoordinator_group.this"
	var versionBefore, epochBefore int64
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					epochBefore = groupValueNow(t, env, p, g, groupEpochOf)
					if env.Coordinator != nil {
						env.Coordinator.ResetRequestCounts()
					}
				},
				Config: env.ProviderConfigAs(env.Reader) + groupDataSourceConfig(p, g),
				Check:  onlyGroupGets(env),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("state"), knownvalue.StringExact("STABLE")),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("target_assignment_summary"),
						knownvalue.MapExact(map[string]knownvalue.Check{consumer.MemberID: knownvalue.Int64Exact(2)})),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("current_assignment_summary"),
						knownvalue.MapExact(map[string]knownvalue.Check{consumer.MemberID: knownvalue.Int64Exact(2)})),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("group_epoch"), groupValueSince(env, p, g, "group_epoch", groupEpochOf, &epochBefore, false)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("active_migration"), knownvalue.Null()),
				},
			},
			{
				// With the consumer gone, a scale-out stays ACTIVE (CONTRACT §7).
				PreConfig: func() {
					consumer.Stop()
					versionBefore = groupValueNow(t, env, p, g, metadataVersionOf)
					dsScaleOutOfBand(t, env, p, 5)
				},
				Config: env.ProviderConfigAs(env.Reader) + groupDataSourceConfig(p, g),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(5)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("metadata_version"), groupValueSince(env, p, g, "metadata_version", metadataVersionOf, &versionBefore, true)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("active_migration"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"resharding_id":    knownvalue.StringRegexp(regexp.MustCompile(`^reshard-`)),
						"from_shard_count": knownvalue.Int64Exact(2),
						"to_shard_count":   knownvalue.Int64Exact(5),
						"state":            knownvalue.StringExact("ACTIVE"),
						"created_at":       knownvalue.StringRegexp(dsRFC3339),
						"updated_at":       knownvalue.StringRegexp(dsRFC3339),
					})),
				},
			},
		},
	})
}

// onlyGroupGets checks that every read of the group data source was the one
// GET /streams/{p}/groups/{g} (the consumer's heartbeats aside).
func onlyGroupGets(env *acctest.Env) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if env.Coordinator == nil {
			return nil
		}
		counts := env.Coordinator.RequestCounts()
		if counts["GET "+coordinator.RouteGroup] == 0 {
			return fmt.Errorf("no GET %s seen; requests: %v", coordinator.RouteGroup, counts)
		}
		for key, n := range counts {
			if key != "GET "+coordinator.RouteGroup && key != "POST "+coordinator.RouteHeartbeat {
				return fmt.Errorf("the group data source must only GET %s, but %s was requested %d times", coordinator.RouteGroup, key, n)
			}
		}
		return nil
	}
}

func TestAccGroupDataSource_missingGroup(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	p, g := acctest.RandomName("orders"), acctest.RandomName("missing")
	dsCreateGroup(t, env, p, acctest.RandomName("other"), 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      env.ProviderConfigAs(env.Reader) + groupDataSourceConfig(p, g),
			ExpectError: wrappedText(fmt.Sprintf(`Group %q under stream prefix %q not found`, g, p)),
		}, {
			Config:      env.ProviderConfigAs(env.Reader) + groupDataSourceConfig(p, g),
			ExpectError: wrappedText(`GROUP_NOT_FOUND`),
		}},
	})
}

func TestAccGroupDataSource_memberPrincipalForbidden(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	if env.Member.Username == "" {
		t.Skip("no MEMBER principal configured for the real coordinator (" + acctest.EnvMemberUsername + ")")
	}
	p, g := acctest.RandomName("orders"), acctest.RandomName("svc")
	dsCreateGroup(t, env, p, g, 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      env.ProviderConfigAs(env.Member) + groupDataSourceConfig(p, g),
			ExpectError: wrappedText(`The coordinator answered 403`),
		}, {
			Config:      env.ProviderConfigAs(env.Member) + groupDataSourceConfig(p, g),
			ExpectError: wrappedText(`lacks the READ role this call needs`),
		}},
	})
}

func TestAccGroupDataSource_invalidName(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      env.ProviderConfigAs(env.Reader) + groupDataSourceConfig("orders/eu", "svc"),
			ExpectError: wrappedText(`stream prefix "orders/eu" contains '/'`),
		}},
	})
}

var dsRFC3339 = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$`)

func dsAtLeast(n int64) func(int64) error {
	return func(v int64) error {
		if v < n {
			return fmt.Errorf("%d is below %d", v, n)
		}
		return nil
	}
}

// dsScaleOutOfBand scales every group of prefix p through the API.
func dsScaleOutOfBand(t *testing.T, env *acctest.Env, p string, target int32) *client.StreamScaleResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := env.Client().ScaleStream(ctx, p, target, client.Mutation{})
	if err != nil {
		t.Fatalf("scale %s to %d: %v", p, target, err)
	}
	return resp
}

// dsExampleConfig is the documented example of a data source as a user
// pastes it under a provider configuration (the READ principal's).
func dsExampleConfig(t *testing.T, env *acctest.Env, typeName string) string {
	t.Helper()
	// The example's own terraform block (required_providers) goes: the
	// provider configuration above declares the provider.
	rel := "data-sources/" + typeName + "/data-source.tf"
	return env.ProviderConfigAs(env.Reader) + rewriteExample(t, env, "examples/"+rel, parseExample(t, rel), exampleRewrite{provider: replaceProvider})
}

// dsExampleEnv is a fresh in-repo coordinator for an example: examples use
// the fixed names "orders" and "order-service", which a shared real
// coordinator may already hold.
func dsExampleEnv(t *testing.T) *acctest.Env {
	t.Helper()
	env := acctest.New(t, acctest.Options{})
	env.RequireInRepo(t, "the examples use fixed group names")
	return env
}

func TestAccGroupDataSource_example(t *testing.T) {
	env := dsExampleEnv(t)
	dsCreateGroup(t, env, "orders", "order-service", 3)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: dsExampleConfig(t, env, "redisstreamcoordinator_group"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orders_shard_count", knownvalue.Int64Exact(3)),
				statecheck.ExpectKnownOutputValue("orders_resharding", knownvalue.Bool(false)),
			},
		}},
	})
}
