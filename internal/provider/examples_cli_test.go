package provider

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-version"
	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// Examples that call modules run through the terraform CLI with the built
// provider (dev overrides, the way `make demo` runs), because
// terraform-plugin-testing refuses state that contains modules.

// builtProvider compiles the provider for one test.
func builtProvider(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := demo.BuildProvider(ctx, "../..", dir, "test"); err != nil {
		t.Fatalf("build provider: %v", err)
	}
	return dir
}

// runExampleWithCLI applies c.prior, then plans c.files (running c's plan
// checks on the saved plan), applies that plan, and requires a following
// plan to be empty.
func runExampleWithCLI(t *testing.T, env *acctest.Env, c exampleCase) {
	if ignored := cliIgnoredFields(c); len(ignored) > 0 {
		t.Fatalf("case %s sets %s, which examples run through the terraform CLI do not honour", c.name, strings.Join(ignored, ", "))
	}
	cfg := exampleConfig(t, env, c.files, c.rw)
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	skipBelowFloor(t, tfBin, cfg)
	if c.setup != nil {
		c.setup(t, env)
	}
	tf, ctx := cliTerraform(t, tfBin)

	run := func(args ...string) int {
		t.Helper()
		return runCLI(ctx, t, tf, args...)
	}
	write := func(cfg string, vars config.Variables) {
		t.Helper()
		if err := os.MkdirAll(tf.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(filepath.Join(tf.Dir, "terraform-plugin-testing.auto.tfvars.json"))
		if err := os.WriteFile(filepath.Join(tf.Dir, "main.tf"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := vars.Write(tf.Dir); err != nil {
			t.Fatal(err)
		}
		// Installs modules only: no terraform init, which would try to
		// reach the registry for the dev-overridden provider.
		if code := run("get"); code != 0 {
			t.Fatalf("terraform get exited %d", code)
		}
	}

	auditedBefore := len(env.Coordinator.AuditEvents()) // what setup created is not the example's doing
	if len(c.prior) > 0 {
		var vars config.Variables
		if c.priorVars != nil {
			vars = c.priorVars(t, env)
		}
		write(exampleConfig(t, env, c.prior, c.rw), vars)
		if code := run("apply", "-input=false", "-auto-approve"); code != 0 {
			t.Fatalf("applying %v exited %d", c.prior, code)
		}
		auditedBefore = len(env.Coordinator.AuditEvents())
	}

	var vars config.Variables
	if c.vars != nil {
		vars = c.vars(t, env)
	}
	write(cfg, vars)
	if code := run("plan", "-input=false", "-out=example.tfplan"); code != 0 {
		t.Fatalf("planning %v exited %d", c.files, code)
	}
	planJSON, err := tf.Output(ctx, "show", "-json", "example.tfplan")
	if err != nil {
		t.Fatal(err)
	}
	var plan tfjson.Plan
	if err := json.Unmarshal(planJSON, &plan); err != nil {
		t.Fatalf("decode plan: %v", err)
	}
	for _, check := range c.planChecks {
		var resp plancheck.CheckPlanResponse
		check.CheckPlan(ctx, plancheck.CheckPlanRequest{Plan: &plan}, &resp)
		if resp.Error != nil {
			t.Errorf("plan check: %v", resp.Error)
		}
	}
	if t.Failed() {
		return
	}
	if code := run("apply", "-input=false", "example.tfplan"); code != 0 {
		t.Fatalf("applying %v exited %d", c.files, code)
	}
	if c.noMutations {
		if events := env.Coordinator.AuditEvents(); len(events) != auditedBefore {
			t.Errorf("applying the example sent %d audited mutation(s) to the coordinator, want none: first is %s %s",
				len(events)-auditedBefore, events[auditedBefore].Action, events[auditedBefore].Path)
		}
	}
	if code := run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Errorf("the plan after applying %v is not empty (exit %d)", c.files, code)
	}
}

// cliIgnoredFields names the fields c sets that runExampleWithCLI does not
// honour, so that such a case fails instead of looking covered.
func cliIgnoredFields(c exampleCase) []string {
	var ignored []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"consumer", c.consumer}, {"probe", c.probe}, {"stateChecks", len(c.stateChecks) > 0},
		{"importScript", c.importScript != ""}, {"nonEmptyPlan", c.nonEmptyPlan != ""},
	} {
		if f.set {
			ignored = append(ignored, f.name)
		}
	}
	return ignored
}

// skipBelowFloor applies the configuration's declared Terraform floor
// (versionChecks) to the terraform binary, as terraform-plugin-testing
// applies TerraformVersionChecks.
func skipBelowFloor(t *testing.T, tfBin, cfg string) {
	t.Helper()
	skipUnlessTerraform(t, tfBin, versionChecks(cfg)...)
}

// skipUnlessTerraform applies TerraformVersionChecks to the terraform (or
// OpenTofu, which reports its own version as terraform_version) binary
// tfBin, for tests that run the CLI themselves: it skips the test with the
// check's reason, or fails it on a check's error.
func skipUnlessTerraform(t *testing.T, tfBin string, checks ...tfversion.TerraformVersionCheck) {
	t.Helper()
	if len(checks) == 0 {
		return
	}
	ctx := context.Background()
	out, err := (&demo.Terraform{Bin: tfBin, Dir: t.TempDir()}).Output(ctx, "version", "-json")
	if err != nil {
		t.Fatal(err)
	}
	var v tfjson.VersionOutput
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("terraform version -json: %v", err)
	}
	tfVersion, err := version.NewVersion(v.Version)
	if err != nil {
		t.Fatalf("terraform version -json: %v", err)
	}
	for _, check := range checks {
		var resp tfversion.CheckTerraformVersionResponse
		check.CheckTerraformVersion(ctx, tfversion.CheckTerraformVersionRequest{TerraformVersion: tfVersion}, &resp)
		if resp.Error != nil {
			t.Fatal(resp.Error)
		}
		if resp.Skip != "" {
			t.Skip(resp.Skip)
		}
	}
}

func TestCLIIgnoredFieldsNamesEachUnhonouredField(t *testing.T) {
	all := exampleCase{
		consumer: true, probe: true, stateChecks: []statecheck.StateCheck{nil},
		importScript: "resources/redisstreamcoordinator_group/import.sh", nonEmptyPlan: "why",
	}
	want := "consumer, probe, stateChecks, importScript, nonEmptyPlan"
	if got := strings.Join(cliIgnoredFields(all), ", "); got != want {
		t.Errorf("cliIgnoredFields = %q, want %q", got, want)
	}
	// What the CLI path runs: setup, prior state, variables, plan checks
	// and the no-mutation check.
	honoured := exampleCase{
		setup: func(*testing.T, *acctest.Env) {}, prior: []string{"x.tf"}, vars: func(*testing.T, *acctest.Env) config.Variables { return nil },
		planChecks: []plancheck.PlanCheck{nil}, noMutations: true,
	}
	if got := cliIgnoredFields(honoured); len(got) != 0 {
		t.Errorf("cliIgnoredFields = %q for a case the CLI path fully runs", got)
	}
}

// runCLI runs one terraform command without colour and returns its exit
// code; a command that could not run fails the test.
func runCLI(ctx context.Context, t *testing.T, tf *demo.Terraform, args ...string) int {
	t.Helper()
	code, err := tf.Run(ctx, append(args, "-no-color")...)
	if err != nil {
		t.Fatalf("%s %s: %v", tf.Bin, strings.Join(args, " "), err)
	}
	return code
}

// cliTerraform runs the built provider through the terraform CLI in a fresh
// directory (tf.Dir, not yet created) with a dev-override CLI configuration;
// its output is logged when the test fails.
func cliTerraform(t *testing.T, tfBin string) (*demo.Terraform, context.Context) {
	t.Helper()
	root := t.TempDir()
	tf := &demo.Terraform{Bin: tfBin, Dir: filepath.Join(root, "work"), CLIConfig: filepath.Join(root, "terraform.rc")}
	if err := demo.WriteCLIConfig(tf.CLIConfig, builtProvider(t)); err != nil {
		t.Fatal(err)
	}
	log := &strings.Builder{}
	tf.Stdout, tf.Stderr = log, log
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("terraform output:\n%s", log.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return tf, ctx
}
