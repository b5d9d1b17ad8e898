package provider

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// cannotImportMissing is Terraform's error for an import whose Read found nothing.
var cannotImportMissing = regexp.MustCompile(`Cannot import non-existent remote object`)

// importBlock is an import block into addr, by id or by identity.
func importBlock(addr, p, g string, byIdentity bool) string {
	if byIdentity {
		return fmt.Sprintf(`
import {
  to       = %s
  identity = { stream_prefix = %q, consumer_group = %q }
}
`, addr, p, g)
	}
	return fmt.Sprintf(`
import {
  to = %s
  id = %q
}
`, addr, p+"/"+g)
}

// expectNothingSent fails t unless the coordinator has no group {p, g} and
// (in-repo, from its audit log) Terraform sent no mutation of prefix p.
func (a *accTest) expectNothingSent(t *testing.T, p, g string) {
	t.Helper()
	if c := a.env.Coordinator; c != nil {
		if sent := terraformMutations(c, p); len(sent) != 0 {
			t.Errorf("an import must never create: the coordinator audited %d mutation(s) of %s, first %s %s", len(sent), p, sent[0].Action, sent[0].Path)
		}
	}
	if err := a.groupGone(p, g)(nil); err != nil {
		t.Error(err)
	}
}

// An import of a group the coordinator does not have fails as Terraform
// expects, whatever the import's form and whichever of the two resources,
// and nothing is created (issue 24 §1). It used to plan an import and a
// re-creation (-/+) of the group, and the apply created it.
func TestAccImport_missingGroupNeverCreates(t *testing.T) {
	a := newAccTest(t, acctest.Options{EveryNewerCLI: true}) // identity: both CLIs store it
	for _, tc := range []struct {
		name       string
		addr       string
		byIdentity bool
	}{
		{"group by id", groupAddr, false},
		{"group by identity", groupAddr, true},
		{"shard count by id", shardCountAddr, false},
		{"shard count by identity", shardCountAddr, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, g := acctest.RandomName("importmissing"), "svc"
			var checks []tfversion.TerraformVersionCheck
			if tc.byIdentity {
				checks = append(checks, tfversion.SkipBelow(tfversion.Version1_12_0)) // import blocks with identity
			}
			body := groupHCL("test", p, g)
			if tc.addr == shardCountAddr {
				body = shardCountHCL("test", p, g, 2)
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: a.factories(),
				TerraformVersionChecks:   checks,
				Steps: []resource.TestStep{{
					// A plain apply, so that a plan that imports and re-creates
					// would go on to create.
					Config:      a.env.ProviderConfig() + body + importBlock(tc.addr, p, g, tc.byIdentity),
					ExpectError: cannotImportMissing,
				}},
			})
			a.expectNothingSent(t, p, g)
		})
	}
}

// `terraform plan -generate-config-out` of an import block for a missing
// group fails the same way, for both resources.
func TestAccImport_generateConfigOutOfMissingGroup(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	for _, addr := range []string{groupAddr, shardCountAddr} {
		t.Run(addr, func(t *testing.T) {
			p, g := acctest.RandomName("genmissing"), "svc"
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: a.factories(),
				Steps: []resource.TestStep{{
					Config:          a.env.ProviderConfig(),
					ResourceName:    addr,
					ImportState:     true,
					ImportStateKind: resource.ImportBlockWithID,
					ImportStateId:   p + "/" + g,
					GenerateConfig:  true,
					ExpectError:     cannotImportMissing,
				}},
			})
			a.expectNothingSent(t, p, g)
		})
	}
}

// An import planned while the provider configuration is unknown (an
// endpoint from a resource not created yet) fails saying why: there is no
// coordinator to read the group from, and nothing is imported unread.
func TestAccImport_unconfiguredProvider(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("importunconf"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:      a.providerConfigUnknownAtPlan() + groupHCL("test", p, g) + importBlock(groupAddr, p, g, false),
			ExpectError: diagRe("Cannot import group "+p+"/"+g+" yet", "endpoint", "Nothing was imported"),
		}},
	})
}

// `terraform import` (the command, by string id) of a missing group fails
// the same way.
func TestAccImport_missingGroupImportCommand(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("importcmd"), "svc"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{{
			Config:        a.env.ProviderConfig() + groupHCL("test", p, g),
			ResourceName:  groupAddr,
			ImportState:   true,
			ImportStateId: p + "/" + g,
			ExpectError:   cannotImportMissing,
		}},
	})
	a.expectNothingSent(t, p, g)
}

// A group Terraform created that then vanished keeps its state and is
// planned for re-creation (-/+): only an import that finds nothing fails.
// (The re-creation itself is covered by the group drift tests; this pins
// that the import marker does not leak into a created group's state.)
func TestAccImport_importedThenVanishedIsReCreated(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p, g := acctest.RandomName("importvanish"), "svc"
	a.createGroupOutOfBand(t, p, g, 2)
	config := a.env.ProviderConfig() + groupHCL("test", p, g, `deletion_policy = "DELETE"`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config + importBlock(groupAddr, p, g, false)},
			{
				PreConfig: func() {
					if _, err := a.env.Client().DeleteGroup(ctxT(t), p, g, true, outOfBandMutation()); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(groupAddr, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: a.expectGroup(p, g, func(*client.Group) error { return nil }),
			},
		},
	})
}

// The configuration `terraform query -generate-config-out` writes for a
// group that is deleted before it is applied fails to import, both
// resources, and nothing is created (issue 24 §1): the import blocks name
// groups by identity, and an identity of a group that is gone is no reason to
// create one.
func TestAccImport_generatedConfigOfDeletedGroup(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	t.Parallel()
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	if tofu, err := acctest.IsOpenTofu(tfBin); err != nil {
		t.Fatal(err)
	} else if tofu {
		t.Skip("OpenTofu has no list resources and no `query` command (OpenTofu 1.12)")
	}
	skipUnlessTerraform(t, tfBin, tfversion.SkipBelow(tfversion.Version1_14_0))
	a := &accTest{env: acctest.New(t, acctest.Options{})}
	p, g := acctest.RandomName("gendeleted"), "svc"
	a.createGroupOutOfBand(t, p, g, 3)

	tf, ctx := cliTerraform(t, tfBin)
	out := &strings.Builder{}
	tf.Stdout, tf.Stderr = io.MultiWriter(tf.Stdout, out), io.MultiWriter(tf.Stderr, out)
	query := fmt.Sprintf(`
list "redisstreamcoordinator_group" "prefix" {
  provider = redisstreamcoordinator
  config {
    stream_prefix = %[1]q
  }
}
list "redisstreamcoordinator_group_shard_count" "prefix" {
  provider = redisstreamcoordinator
  config {
    stream_prefix = %[1]q
  }
}
`, p)
	writeWorkFiles(t, tf.Dir, map[string]string{"main.tf": a.env.ProviderConfig(), "coordinator.tfquery.hcl": query})
	if code := runCLI(ctx, t, tf, "query", "-generate-config-out=generated.tf"); code != 0 {
		t.Fatalf("terraform query exited %d", code)
	}
	generated, err := os.ReadFile(filepath.Join(tf.Dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(generated), "import {"); n != 2 {
		t.Fatalf("the query generated %d import blocks, want one per resource:\n%s", n, generated)
	}
	// Another actor deletes the group after the query.
	if _, err := a.env.Client().DeleteGroup(ctxT(t), p, g, true, outOfBandMutation()); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := runCLI(ctx, t, tf, "apply", "-input=false", "-auto-approve"); code == 0 {
		t.Fatal("terraform apply of the generated configuration succeeded; want the imports to fail")
	}
	if n := strings.Count(out.String(), "Cannot import non-existent remote object"); n != 2 {
		t.Errorf("want Terraform's \"Cannot import non-existent remote object\" for both resources, got %d in:\n%s", n, out.String())
	}
	a.expectNothingSent(t, p, g)
}
