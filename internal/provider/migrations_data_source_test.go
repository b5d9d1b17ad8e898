package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

func TestAccMigrationsDataSource(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	p, g := acctest.RandomName("orders"), acctest.RandomName("svc")
	dsCreateGroup(t, env, p, g, 2)

	const ds = "data.redisstreamcoordinator_migrations.this"
	config := env.ProviderConfigAs(env.Reader) + fmt.Sprintf(`
data "redisstreamcoordinator_migrations" "this" {
  stream_prefix  = %q
  consumer_group = %q
}
`, p, g)
	var reshardingID string
	migration := func(state string) knownvalue.Check {
		return lazyCheck{build: func() knownvalue.Check {
			return knownvalue.ObjectExact(map[string]knownvalue.Check{
				"resharding_id":    knownvalue.StringExact(reshardingID),
				"from_shard_count": knownvalue.Int64Exact(2),
				"to_shard_count":   knownvalue.Int64Exact(6),
				"state":            knownvalue.StringExact(state),
				"created_at":       knownvalue.StringRegexp(dsRFC3339),
				"updated_at":       knownvalue.StringRegexp(dsRFC3339),
			})
		}}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("migrations"), knownvalue.ListSizeExact(0)),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("active_resharding_id"), knownvalue.Null()),
				},
			},
			{
				// A scale-out without consumers stays ACTIVE (CONTRACT §7).
				PreConfig: func() {
					resp := dsScaleOutOfBand(t, env, p, 6)
					reshardingID = resp.Migrations[0].ReshardingID
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("migrations"), knownvalue.ListExact([]knownvalue.Check{migration("ACTIVE")})),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("active_resharding_id"), lazyCheck{build: func() knownvalue.Check {
						return knownvalue.StringExact(reshardingID)
					}}),
				},
			},
			{
				// A rollback finishes the migration at once: ROLLED_BACK, nothing active.
				PreConfig: func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					if _, err := env.Client().RollbackMigration(ctx, p, g, reshardingID, client.Mutation{}); err != nil {
						t.Fatalf("rollback %s: %v", reshardingID, err)
					}
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("migrations"), knownvalue.ListExact([]knownvalue.Check{migration("ROLLED_BACK")})),
					statecheck.ExpectKnownValue(ds, tfjsonpath.New("active_resharding_id"), knownvalue.Null()),
				},
			},
			{
				Config: env.ProviderConfigAs(env.Reader) + fmt.Sprintf(`
data "redisstreamcoordinator_migrations" "this" {
  stream_prefix  = %q
  consumer_group = %q
}
`, acctest.RandomName("missing"), g),
				ExpectError: regexp.MustCompile(`GROUP_NOT_FOUND`),
			},
		},
	})
}

func TestAccMigrationsDataSource_example(t *testing.T) {
	env := dsExampleEnv(t)
	dsCreateGroup(t, env, "orders", "order-service", 3)
	// Without consumers the scale-out stays ACTIVE.
	id := dsScaleOutOfBand(t, env, "orders", 6).Migrations[0].ReshardingID
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: dsExampleConfig(t, env, "redisstreamcoordinator_migrations"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownOutputValue("orders_migration_in_progress", knownvalue.StringExact(id)),
				statecheck.ExpectKnownOutputValue("orders_resharding_history", knownvalue.ListExact([]knownvalue.Check{
					knownvalue.StringExact("3 -> 6: ACTIVE"),
				})),
			},
		}},
	})
}
