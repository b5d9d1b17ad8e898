package provider

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// The release objects' and durations' serialization was never pinned down,
// so every plausible shape must read sensibly.
func TestReleaseVersion(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]types.String{
		`{"major":0,"minor":1,"patch":0,"qualifier":null,"version":"0.1.0"}`: types.StringValue("0.1.0"),
		`{"major":1,"minor":2,"patch":3}`:                                    types.StringValue("1.2.3"),
		`{"major":1,"minor":0,"patch":0,"qualifier":"rc1"}`:                  types.StringValue("1.0.0-rc1"),
		`"2.0.0"`: types.StringValue("2.0.0"),
		`null`:    types.StringNull(),
		``:        types.StringNull(),
		`{}`:      types.StringNull(),
		`42`:      types.StringNull(),
	} {
		if got := releaseVersion(json.RawMessage(raw)); !got.Equal(want) {
			t.Errorf("releaseVersion(%s) = %v, want %v", raw, got, want)
		}
	}
}

func TestOpaqueStrings(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]map[string]string{
		`{"heartbeatInterval":"PT3S","memberLeaseTtl":"PT15S"}`:     {"heartbeatInterval": "PT3S", "memberLeaseTtl": "PT15S"},
		`{"heartbeatInterval":3.000000000,"rebalanceTimeout":60}`:   {"heartbeatInterval": "3", "rebalanceTimeout": "60"},
		`{"heartbeatInterval":{"seconds":3},"memberLeaseTtl":null}`: {"heartbeatInterval": `{"seconds":3}`},
		`null`: {},
		`[]`:   {},
	} {
		got := opaqueStrings(json.RawMessage(raw))
		if got == nil || !maps.Equal(got, want) {
			t.Errorf("opaqueStrings(%s) = %v, want %v", raw, got, want)
		}
	}
}

func TestAccCompatibilityDataSource(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	const ds = "data.redisstreamcoordinator_compatibility.this"
	version := map[string]knownvalue.Check{
		"version":                 knownvalue.Int64Exact(1),
		"status":                  knownvalue.StringExact("ACTIVE"),
		"introduced_in":           knownvalue.StringExact("0.1.0"),
		"deprecated_in":           knownvalue.Null(),
		"minimum_supported_until": knownvalue.StringExact("1.0.0"),
		"removed_in":              knownvalue.Null(),
	}
	if env.Coordinator != nil {
		version["timing_defaults"] = knownvalue.MapExact(map[string]knownvalue.Check{
			"heartbeatInterval": knownvalue.StringExact("PT3S"),
			"memberLeaseTtl":    knownvalue.StringExact("PT15S"),
			"rebalanceTimeout":  knownvalue.StringExact("PT1M"),
		})
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: env.ProviderConfigAs(env.Reader) + `data "redisstreamcoordinator_compatibility" "this" {}`,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("current_coordination_version"), knownvalue.Int64Exact(1)),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("supported_coordination_versions"), knownvalue.ObjectExact(map[string]knownvalue.Check{
					"min": knownvalue.Int64Exact(1), "max": knownvalue.Int64Exact(1),
				})),
				statecheck.ExpectKnownValue(ds, tfjsonpath.New("coordination_versions"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectPartial(version),
				})),
			},
		}},
	})
}

// The example's check block passes against a coordinator that supports
// protocol version 1.
func TestAccCompatibilityDataSource_example(t *testing.T) {
	env := dsExampleEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: dsExampleConfig(t, env, "redisstreamcoordinator_compatibility"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_compatibility.this", tfjsonpath.New("supported_coordination_versions").AtMapKey("max"),
					knownvalue.Int64Exact(1)),
			},
		}},
	})
}
