package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// readmeUsingTheProvider is the configuration of the README's "Using the
// provider" section: its first ```terraform block.
func readmeUsingTheProvider(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Using the provider\n")
	if !ok {
		t.Fatal(`README.md has no "## Using the provider" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, rest, ok := strings.Cut(section, "\n```terraform\n")
	block, _, closed := strings.Cut(rest, "\n```\n")
	if !ok || !closed {
		t.Fatal(`the README's "Using the provider" section has no terraform block`)
	}
	return block + "\n"
}

// The README's first configuration copies cleanly (it declares the
// provider), creates the group without scaling it, and the later change it
// describes (shard_count = 12, once the consumers run) scales it.
func TestAccExamples_readmeUsingTheProvider(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	env := acctest.New(t, acctest.Options{})
	coord := env.RequireInRepo(t, "the README uses fixed names such as orders/order-service, which would collide on a shared coordinator")

	src := readmeUsingTheProvider(t)
	if !strings.Contains(src, "required_providers") {
		t.Error("the README's configuration does not declare the provider in required_providers")
	}
	parse := func(src string) *hclwrite.File {
		t.Helper()
		f, diags := hclwrite.ParseConfig([]byte(src), "README.md", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("the README's configuration does not parse: %s", diags.Error())
		}
		return f
	}
	header := fmt.Sprintf("terraform {\n  required_providers {\n    redisstreamcoordinator = {\n      source = %q\n    }\n  }\n}\n", acctest.ProviderSource)
	rw := exampleRewrite{provider: repointProvider}
	first := header + rewriteExample(t, env, "README.md", parse(src), rw)
	later := header + rewriteExample(t, env, "README.md (the later change)",
		parse(replaceOnce(t, src, "shard_count    = 8 #", "shard_count    = 12 #")), rw)

	consumer := env.StartConsumer(t, ordersPrefix, ordersGroup)
	count := "redisstreamcoordinator_group_shard_count.orders"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: first,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("redisstreamcoordinator_group.orders", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(8)),
					statecheck.ExpectKnownValue(count, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(8)),
				},
				Check: func(*terraform.State) error {
					for _, e := range coord.AuditEvents() {
						if e.Action != "CREATE_GROUP" {
							return fmt.Errorf("the first apply sent %s %s; want only the group's creation", e.Action, e.Path)
						}
					}
					// The later change comes once the group's consumers run.
					return waitJoined(ctxT(t), consumer)
				},
			},
			{
				Config: later,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(count, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(count, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(12)),
					statecheck.ExpectKnownValue(count, tfjsonpath.New("migration_state"), knownvalue.StringExact("DEPRECATED")),
				},
			},
		},
	})
}

// Example files that are fragments of another example's configuration, or
// configure no provider, and so need no required_providers block.
var examplesWithoutProviderRequirement = map[string]string{
	"resources/redisstreamcoordinator_group/import-by-string-id.tf":             "goes with resource.tf",
	"resources/redisstreamcoordinator_group_shard_count/import-by-string-id.tf": "goes with resource.tf",
	"guides/migrate-from-stream-group-module/before.tf":                         "uses only the module, not this provider",
	"guides/bulk-import-from-stream-group-module/before.tf":                     "uses only the module, not this provider",
	"guides/pull-request-workflow/backend.tf":                                   "the backend block of main.tf's configuration",
	"guides/private-registry/publish.tf":                                        "configures the tfe provider, not this one",
}

var providerSourceRE = regexp.MustCompile(`\bsource\s*=\s*"` + regexp.QuoteMeta(acctest.ProviderSource) + `"`)

// TestExamplesDeclareTheProvider: every example copies cleanly on its own,
// so each declares this provider's source in required_providers.
func TestExamplesDeclareTheProvider(t *testing.T) {
	for _, rel := range exampleFiles(t) {
		if !strings.HasSuffix(rel, ".tf") || examplesWithoutProviderRequirement[rel] != "" {
			continue
		}
		found := false
		for _, block := range parseExample(t, rel).Body().Blocks() {
			if block.Type() != "terraform" {
				continue
			}
			for _, rp := range block.Body().Blocks() {
				if rp.Type() != "required_providers" {
					continue
				}
				if a := rp.Body().GetAttribute(TypeName); a != nil && providerSourceRE.Match(a.Expr().BuildTokens(nil).Bytes()) {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("examples/%s does not declare %s = { source = %q } in required_providers: it does not copy cleanly on its own", rel, TypeName, acctest.ProviderSource)
		}
	}
}
