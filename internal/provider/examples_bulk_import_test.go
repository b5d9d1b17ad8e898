package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// The bulk import guide's examples, applied at the scale the guide is for:
// bulkPrefixes × bulkGroupsPerPrefix groups that exist before Terraform.
const (
	bulkPrefixes        = 22
	bulkGroupsPerPrefix = 10
)

// bulkGroup is one pre-created group of the bulk fixture.
type bulkGroup struct {
	prefix, group string
	shards        int32
}

// bulkFixture lists the fixture's groups: prefix bulk-NN holds groups
// svc-00… with NN%4+1 shards (a prefix's groups share one count).
func bulkFixture() []bulkGroup {
	var out []bulkGroup
	for p := 0; p < bulkPrefixes; p++ {
		for g := 0; g < bulkGroupsPerPrefix; g++ {
			out = append(out, bulkGroup{fmt.Sprintf("bulk-%02d", p), fmt.Sprintf("svc-%02d", g), int32(p%4 + 1)})
		}
	}
	return out
}

// createBulkFixture creates every fixture group through the client, a few
// prefixes at a time, each prefix's first group before its siblings.
func createBulkFixture(t *testing.T, env *acctest.Env) {
	t.Helper()
	createGroupsOutOfBand(t, env, bulkFixture())
}

// bulkStreamGroups is the stream_groups variable of the module migration:
// the module's inputs for every fixture group.
func bulkStreamGroups() config.Variable {
	m := map[string]config.Variable{}
	for _, g := range bulkFixture() {
		m[g.prefix+"-"+g.group] = config.ObjectVariable(map[string]config.Variable{
			"stream_prefix":  config.StringVariable(g.prefix),
			"consumer_group": config.StringVariable(g.group),
			"shard_count":    config.IntegerVariable(int(g.shards)),
		})
	}
	return config.MapVariable(m)
}

// expectImports: the plan imports exactly n resources of each type and
// changes nothing else.
func expectImports(groups, shardCounts int) plancheck.PlanCheck {
	return planCheckFunc(func(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
		imported := map[string]int{}
		for _, rc := range req.Plan.ResourceChanges {
			if rc.Mode != "managed" || rc.Type == "terraform_data" {
				continue
			}
			if rc.Change.Importing == nil || !rc.Change.Actions.NoOp() {
				resp.Error = fmt.Errorf("%s: actions %v, importing %v; want a no-op import", rc.Address, rc.Change.Actions, rc.Change.Importing != nil)
				return
			}
			imported[rc.Type]++
		}
		if imported["redisstreamcoordinator_group"] != groups || imported["redisstreamcoordinator_group_shard_count"] != shardCounts {
			resp.Error = fmt.Errorf("the plan imports %v, want %d groups and %d shard counts", imported, groups, shardCounts)
		}
	})
}

// expectAdoptedShardCounts: the example's output maps every fixture prefix
// to its shard count.
func expectAdoptedShardCounts() plancheck.PlanCheck {
	return planCheckFunc(func(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
		oc := req.Plan.OutputChanges["adopted_shard_counts"]
		if oc == nil {
			resp.Error = fmt.Errorf("the plan has no adopted_shard_counts output")
			return
		}
		got, _ := oc.After.(map[string]any)
		want := map[string]string{}
		for _, g := range bulkFixture() {
			want[g.prefix] = fmt.Sprint(g.shards)
		}
		if len(got) != len(want) {
			resp.Error = fmt.Errorf("adopted_shard_counts has %d prefixes, want %d: %v", len(got), len(want), oc.After)
			return
		}
		for p, n := range want {
			if fmt.Sprint(got[p]) != n {
				resp.Error = fmt.Errorf("adopted_shard_counts[%q] = %v, want %s", p, got[p], n)
				return
			}
		}
	})
}

// bulkImportExampleCases are the bulk import guide's examples.
func bulkImportExampleCases() []exampleCase {
	groups := bulkPrefixes * bulkGroupsPerPrefix
	return []exampleCase{
		{
			name:   "guide_bulk_import",
			files:  []string{"guides/bulk-import/main.tf"},
			setup:  createBulkFixture,
			viaCLI: "for_each instances",
			vars: func(*testing.T, *acctest.Env) config.Variables {
				var prefixes []config.Variable
				for p := 0; p < bulkPrefixes; p++ {
					prefixes = append(prefixes, config.StringVariable(fmt.Sprintf("bulk-%02d", p)))
				}
				return config.Variables{"stream_prefixes": config.SetVariable(prefixes...)}
			},
			planChecks: []plancheck.PlanCheck{
				expectImports(groups, bulkPrefixes),
				expectImported("redisstreamcoordinator_group.adopted[\"bulk-21/svc-09\"]"),
				expectImported("redisstreamcoordinator_group_shard_count.adopted[\"bulk-21\"]"),
				expectAdoptedShardCounts(),
			},
			noMutations: true,
		},
		{
			name:  "guide_bulk_import_from_stream_group_module",
			prior: []string{"guides/bulk-import-from-stream-group-module/before.tf"},
			files: []string{"guides/bulk-import-from-stream-group-module/after.tf"},
			rw:    exampleRewrite{moduleSources: map[string]string{"stream_group": "testdata/stream-group-module"}},
			// What the module's script did when the module was applied.
			setup: createBulkFixture,
			priorVars: func(*testing.T, *acctest.Env) config.Variables {
				return config.Variables{
					"coordinator_password": config.StringVariable("unused-by-the-stand-in"),
					"stream_groups":        bulkStreamGroups(),
				}
			},
			vars: func(*testing.T, *acctest.Env) config.Variables {
				return config.Variables{"stream_groups": bulkStreamGroups()}
			},
			planChecks: []plancheck.PlanCheck{
				expectImports(groups, bulkPrefixes),
				expectImported("redisstreamcoordinator_group.managed[\"bulk-00-svc-00\"]"),
				expectImported("redisstreamcoordinator_group_shard_count.managed[\"bulk-00\"]"),
				expectForgotten("module.stream_group[\"bulk-21-svc-09\"].terraform_data.stream_group"),
			},
			noMutations: true,
		},
	}
}

// TestAccBulkImportGenerateConfigRefused backs the bulk import guide's
// claim: neither Terraform nor OpenTofu generates configuration for import
// blocks with for_each, and each says so in its own words.
func TestAccBulkImportGenerateConfigRefused(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	t.Parallel()
	// Terraform and OpenTofu refuse in their own words: both are checked.
	env := acctest.New(t, acctest.Options{EveryNewerCLI: true})
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	want := "The target resource does not use for_each"
	if acctest.UnderOpenTofu(t) {
		want = "Configuration generation for count and for_each resources not supported"
	}
	root := t.TempDir()
	tf := &demo.Terraform{Bin: tfBin, Dir: filepath.Join(root, "work"), CLIConfig: filepath.Join(root, "terraform.rc")}
	if err := demo.WriteCLIConfig(tf.CLIConfig, builtProvider(t)); err != nil {
		t.Fatal(err)
	}
	cfg := env.ProviderConfig() + `
import {
  for_each = toset(["bulk-00/svc-00", "bulk-00/svc-01"])
  to       = redisstreamcoordinator_group.adopted[each.key]
  id       = each.key
}
`
	if err := os.MkdirAll(tf.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tf.Dir, "main.tf"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	tf.Stdout, tf.Stderr = &out, &out
	code, err := tf.Run(ctxT(t), "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf")
	if err != nil {
		t.Fatal(err)
	}
	if code == 0 || !strings.Contains(strings.Join(strings.Fields(out.String()), " "), want) {
		t.Errorf("plan -generate-config-out with a for_each import block: exit %d, want a failure saying %q:\n%s", code, want, out.String())
	}
	if _, err := os.Stat(filepath.Join(tf.Dir, "generated.tf")); err == nil {
		t.Error("generated.tf was written")
	}
}
