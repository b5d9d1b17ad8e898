package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// The list resources' examples, run by TestAccQueryImport_wholeCoordinator.
const (
	groupListExample      = "list-resources/redisstreamcoordinator_group/list-resource.tfquery.hcl"
	shardCountListExample = "list-resources/redisstreamcoordinator_group_shard_count/list-resource.tfquery.hcl"
)

func init() {
	examplesTestedElsewhere[groupListExample] = "TestAccQueryImport_wholeCoordinator"
	examplesTestedElsewhere[shardCountListExample] = "TestAccQueryImport_wholeCoordinator"
}

// The whole-coordinator fixture of the query test: queryGroups groups on
// queryPrefixes prefixes (the first half of the prefixes have 3 groups, the
// rest 2), created out of band, with 1 to 4 shards per prefix.
const (
	queryPrefixes = 120
	queryGroups   = 300
)

func queryFixture() []bulkGroup {
	var out []bulkGroup
	for p := 0; p < queryPrefixes; p++ {
		n := 2
		if p < queryGroups-2*queryPrefixes {
			n = 3
		}
		for g := 0; g < n; g++ {
			out = append(out, bulkGroup{fmt.Sprintf("query-%03d", p), fmt.Sprintf("svc-%d", g), int32(p%4 + 1)})
		}
	}
	return out
}

// createGroupsOutOfBand creates groups through the coordinator's API, as
// another tool would have, a few prefixes at a time.
func createGroupsOutOfBand(t *testing.T, env *acctest.Env, groups []bulkGroup) {
	t.Helper()
	c := env.Client()
	ctx := ctxT(t)
	byPrefix := map[string][]bulkGroup{}
	var prefixes []string
	for _, g := range groups {
		if _, ok := byPrefix[g.prefix]; !ok {
			prefixes = append(prefixes, g.prefix)
		}
		byPrefix[g.prefix] = append(byPrefix[g.prefix], g)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		work = make(chan string)
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				for _, g := range byPrefix[p] {
					shards := g.shards
					if _, err := c.CreateGroup(ctx, g.prefix, g.group, &shards, outOfBandMutation()); err != nil {
						mu.Lock()
						errs = append(errs, fmt.Errorf("create %s/%s: %w", g.prefix, g.group, err))
						mu.Unlock()
					}
				}
			}
		}()
	}
	for _, p := range prefixes {
		work <- p
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d groups not created, first: %v", len(errs), errs[0])
	}
}

// TestAccQueryImport_wholeCoordinator is the headline check of bringing an
// existing coordinator under management with Terraform 1.14+: on a
// coordinator with 300 groups on 120 prefixes created outside Terraform (one
// prefix drained to 0 shards),
// `terraform query -generate-config-out=generated.tf` (the two list
// resources' examples) costs the coordinator one request and writes a
// minimal configuration; `terraform plan` then shows only imports (300 groups,
// 120 shard counts, nothing to add, change or destroy), `terraform apply` of
// that plan sends no mutation (the coordinator's audit log), and the next
// plan is empty.
func TestAccQueryImport_wholeCoordinator(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	t.Parallel()
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	if isTofu, err := acctest.IsOpenTofu(tfBin); err != nil {
		t.Fatal(err)
	} else if isTofu {
		t.Skip("OpenTofu has no list resources and no `query` command (OpenTofu 1.12); the bulk import guide's for_each path covers it (TestAccExamples/guide_bulk_import)")
	}
	skipUnlessTerraform(t, tfBin, tfversion.SkipBelow(tfversion.Version1_14_0))
	env := acctest.New(t, acctest.Options{})
	c := env.RequireInRepo(t, "creates 300 groups with fixed names, and counts requests and audited mutations")

	start := time.Now()
	fixture := queryFixture()
	createGroupsOutOfBand(t, env, fixture)
	// One prefix is drained (0 shards): its groups import without
	// initial_shard_count, and its shard count as 0.
	drained := fixture[len(fixture)-1].prefix
	dsScaleOutOfBand(t, env, drained, 0)
	for _, g := range fixture {
		if g.prefix == drained {
			waitForMigrationDone(t, &accTest{env: env}, g.prefix, g.group)
		}
	}
	created := time.Since(start)

	tf, ctx := cliTerraform(t, tfBin)
	query := exampleFileText(t, groupListExample) + "\n" + exampleFileText(t, shardCountListExample)
	writeWorkFiles(t, tf.Dir, map[string]string{"main.tf": env.ProviderConfig(), "coordinator.tfquery.hcl": query})
	run := func(args ...string) int {
		t.Helper()
		return runCLI(ctx, t, tf, args...)
	}
	timed := map[string]time.Duration{}
	timeRun := func(name string, args ...string) int {
		t.Helper()
		s := time.Now()
		code := run(args...)
		timed[name] = time.Since(s)
		return code
	}

	c.ResetRequestCounts()
	if code := timeRun("query", "query", "-generate-config-out=generated.tf"); code != 0 {
		t.Fatalf("terraform query exited %d", code)
	}
	if total, listings := totalOf(c.RequestCounts()), c.RequestCount("GET", coordinator.RouteMonitoringGroups); total != 1 || listings != 1 {
		t.Errorf("the query of %d groups sent %d requests (%d GET /monitoring/groups), want that one listing: %v", queryGroups, total, listings, c.RequestCounts())
	}
	generated, err := os.ReadFile(filepath.Join(tf.Dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	checkGeneratedConfig(t, string(generated), queryGroups, queryPrefixes)

	c.ResetRequestCounts()
	if code := timeRun("plan", "plan", "-input=false", "-out=import.tfplan"); code != 0 {
		t.Fatalf("terraform plan of the generated configuration exited %d", code)
	}
	planRequests := c.RequestCounts()
	checkImportOnlyPlan(ctx, t, tf, "import.tfplan", queryGroups, queryPrefixes)

	audited := len(c.AuditEvents())
	if code := timeRun("apply", "apply", "-input=false", "import.tfplan"); code != 0 {
		t.Fatalf("terraform apply of the import plan exited %d", code)
	}
	if events := c.AuditEvents(); len(events) != audited {
		t.Errorf("applying the import plan sent %d audited mutation(s), want none: first is %s %s", len(events)-audited, events[audited].Action, events[audited].Path)
	}
	if code := timeRun("replan", "plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Errorf("the plan after importing is not empty (exit %d)", code)
	}
	t.Logf("%d groups on %d prefixes: created out of band in %s; query %s, plan %s (requests %v), apply %s, next plan %s; total %s",
		queryGroups, queryPrefixes, created.Round(time.Millisecond), timed["query"].Round(time.Millisecond), timed["plan"].Round(time.Millisecond),
		planRequests, timed["apply"].Round(time.Millisecond), timed["replan"].Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

func exampleFileText(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(examplesDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeWorkFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// What generated configuration may set, per resource type: the required
// arguments, the optional ones with the values an import records, and the
// optional ones without a default, which Terraform writes as `= null`.
// Computed-only attributes (id, shard_count of a group, metadata_version,
// …) must never appear: Terraform would refuse the configuration.
var generatedArguments = map[string]map[string]string{
	"redisstreamcoordinator_group": {
		"provider": "", "stream_prefix": "", "consumer_group": "", "initial_shard_count": "", "deletion_policy": `"ABANDON"`,
		"force_delete": "false", "requested_by": "null", "reason": "null", "acknowledged_metadata_version": "null",
	},
	"redisstreamcoordinator_group_shard_count": {
		"provider": "", "stream_prefix": "", "consumer_group": "", "shard_count": "", "wait_for": `"COMPLETION"`,
		"rollback_on_revert": "false", "requested_by": "null", "reason": "null", "acknowledged_metadata_version": "null",
	},
}

var (
	generatedResource = regexp.MustCompile(`(?ms)^resource "([a-z_]+)" "[^"]+" \{\n(.*?)^\}`)
	generatedArgument = regexp.MustCompile(`^\s*([a-z_]+)\s*=\s*(.*?)\s*$`)
)

// checkGeneratedConfig checks what `terraform query -generate-config-out`
// wrote: a resource block and an identity import block per result, and in
// each resource block only the arguments generatedArguments allows, with
// the values it fixes.
func checkGeneratedConfig(t *testing.T, generated string, groups, shardCounts int) {
	t.Helper()
	blocks := map[string]int{}
	for _, m := range generatedResource.FindAllStringSubmatch(generated, -1) {
		typ, body := m[1], m[2]
		blocks[typ]++
		allowed := generatedArguments[typ]
		for _, line := range strings.Split(body, "\n") {
			a := generatedArgument.FindStringSubmatch(line)
			if a == nil {
				if strings.TrimSpace(line) != "" {
					t.Errorf("generated %s block: unexpected line %q", typ, line)
				}
				continue
			}
			want, ok := allowed[a[1]]
			switch {
			case !ok:
				t.Errorf("generated %s block sets %s = %s, which configuration must not set", typ, a[1], a[2])
			case want != "" && a[2] != want:
				t.Errorf("generated %s block sets %s = %s, want %s", typ, a[1], a[2], want)
			}
		}
	}
	if blocks["redisstreamcoordinator_group"] != groups || blocks["redisstreamcoordinator_group_shard_count"] != shardCounts {
		t.Errorf("generated.tf has resource blocks %v, want %d groups and %d shard counts", blocks, groups, shardCounts)
	}
	if n := len(regexp.MustCompile(`(?m)^\s*identity\s*=\s*\{`).FindAllString(generated, -1)); n != groups+shardCounts {
		t.Errorf("generated.tf has %d import blocks by identity, want %d", n, groups+shardCounts)
	}
	if t.Failed() {
		head := generated
		if len(head) > 3000 {
			head = head[:3000]
		}
		t.Logf("generated.tf begins:\n%s", head)
	}
}

// checkImportOnlyPlan reads a saved plan with `terraform show -json`: it
// must import exactly the given numbers of each resource and plan nothing
// to add, change or destroy.
func checkImportOnlyPlan(ctx context.Context, t *testing.T, tf *demo.Terraform, planFile string, groups, shardCounts int) {
	t.Helper()
	planJSON, err := tf.Output(ctx, "show", "-json", planFile)
	if err != nil {
		t.Fatal(err)
	}
	var plan tfjson.Plan
	if err := json.Unmarshal(planJSON, &plan); err != nil {
		t.Fatalf("decode plan: %v", err)
	}
	var resp plancheck.CheckPlanResponse
	expectImports(groups, shardCounts).CheckPlan(ctx, plancheck.CheckPlanRequest{Plan: &plan}, &resp)
	if resp.Error != nil {
		t.Error(resp.Error)
	}
	add, change, destroy, imports := 0, 0, 0, 0
	for _, rc := range plan.ResourceChanges {
		a := rc.Change.Actions
		switch {
		case a.Create(), a.Replace():
			add++
		case a.Update():
			change++
		case a.Delete():
			destroy++
		}
		if rc.Change.Importing != nil {
			imports++
		}
	}
	if add+change+destroy != 0 || imports != groups+shardCounts {
		t.Errorf("plan: %d to import, %d to add, %d to change, %d to destroy; want %d to import and nothing else",
			imports, add, change, destroy, groups+shardCounts)
	}
}
