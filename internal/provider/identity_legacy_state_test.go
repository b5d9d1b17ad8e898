package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// "Missing Resource Identity After Read/Update" regressions: an
// identity-aware provider meeting a state with no identity, written by a
// Terraform that stores none (1.11) or by this provider before it had
// identities. Every command must work, and, under a CLI that stores
// identities, leave every instance with its identity.
//
// The state holds two groups of legacy-orders with its shard count, and a
// group of legacy-payments with its shard count. Before the newer CLI runs,
// legacy-payments/payment-service is gone from the coordinator: its group's
// refresh keeps it in state (planned re-creation) and its shard count's
// refresh removes it, so both Read paths that do not find the group run
// with a null prior identity too.

const legacyStateDir = "testdata/pre-identity-state"

// legacyGroups are the groups of resources.tf that still exist when the
// newer CLI runs, created with their shard counts.
var legacyGroups = []bulkGroup{
	{"legacy-orders", "order-service", 4},
	{"legacy-orders", "order-analytics", 4},
}

// TestAccLegacyState_preIdentityProvider plans, applies and refreshes the
// states the provider wrote before it had identities (testdata, produced by
// the provider of commit 5c99e0f under Terraform 1.11.4 and 1.16.4) with the
// current provider, under the Terraform or OpenTofu under test.
func TestAccLegacyState_preIdentityProvider(t *testing.T) {
	for _, writtenBy := range []string{"1.11.4", "1.16.4"} {
		t.Run("written_by_terraform_"+writtenBy, func(t *testing.T) {
			tfBin := legacyStateCLI(t)
			env := acctest.New(t, acctest.Options{EveryNewerCLI: true}) // identity: both CLIs store it
			env.RequireInRepo(t, "the committed state names fixed groups (legacy-orders, legacy-payments)")
			createGroupsOutOfBand(t, env, legacyGroups)
			state, err := os.ReadFile(filepath.Join(legacyStateDir, "state-terraform-"+writtenBy+".json"))
			if err != nil {
				t.Fatal(err)
			}
			tf, ctx := cliTerraform(t, tfBin)
			writeWorkFiles(t, tf.Dir, map[string]string{"main.tf": env.ProviderConfig() + legacyResources(t), "terraform.tfstate": string(state)})
			runLegacyStateCommands(ctx, t, tf)
		})
	}
}

// TestAccLegacyState_writtenByTerraform1_11 applies the configuration with
// Terraform 1.11.4 (found on PATH as terraform) and the current provider,
// which then gets no identity stored, and runs the Terraform or OpenTofu
// under test on that state.
func TestAccLegacyState_writtenByTerraform1_11(t *testing.T) {
	tfBin := legacyStateCLI(t)
	old, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("needs Terraform 1.11.4 on PATH as terraform to write the state: none found")
	}
	if v := cliVersion(t, old); v != "1.11.4" {
		t.Skipf("needs Terraform 1.11.4 on PATH as terraform to write the state; %s is %s", old, v)
	}
	env := acctest.New(t, acctest.Options{EveryNewerCLI: true}) // identity: both CLIs store it
	c := env.RequireInRepo(t, "the configuration names fixed groups (legacy-orders, legacy-payments)")

	tf11, ctx := cliTerraform(t, old)
	writeWorkFiles(t, tf11.Dir, map[string]string{"main.tf": env.ProviderConfig() + legacyResources(t)})
	if code, err := tf11.Run(ctx, "apply", "-input=false", "-auto-approve", "-no-color"); err != nil || code != 0 {
		t.Fatalf("terraform 1.11.4 apply: exit %d, %v", code, err)
	}
	if n := len(c.AuditEvents()); n != 3 {
		t.Fatalf("terraform 1.11.4 sent %d audited mutations, want the configuration's 3 group creates (and no scale)", n)
	}
	if _, err := env.Client().DeleteGroup(ctxT(t), "legacy-payments", "payment-service", true, outOfBandMutation()); err != nil {
		t.Fatalf("out-of-band delete: %v", err)
	}
	state, err := os.ReadFile(filepath.Join(tf11.Dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(state), `"identity"`) {
		t.Fatalf("Terraform 1.11.4 wrote identities; the test needs a state without: %s", state)
	}

	tf, ctx := cliTerraform(t, tfBin)
	writeWorkFiles(t, tf.Dir, map[string]string{"main.tf": env.ProviderConfig() + legacyResources(t), "terraform.tfstate": string(state)})
	runLegacyStateCommands(ctx, t, tf)
}

// legacyStateCLI is the Terraform or OpenTofu under test, when it stores
// identities (Terraform 1.12+, OpenTofu 1.12): older ones are what wrote the
// states, and TestAccGroupIdentity covers them.
func legacyStateCLI(t *testing.T) string {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	skipUnlessTerraform(t, tfBin, tfversion.SkipBelow(tfversion.Version1_12_0))
	return tfBin
}

func cliVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := (&demo.Terraform{Bin: bin, Dir: t.TempDir()}).Output(context.Background(), "version", "-json")
	if err != nil {
		t.Fatal(err)
	}
	var v tfjson.VersionOutput
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	return v.Version
}

func legacyResources(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(legacyStateDir, "resources.tf"))
	if err != nil {
		t.Fatal(err)
	}
	return "\n" + string(b)
}

// runLegacyStateCommands runs, on the state in tf.Dir, a saved plan and its
// apply, a refresh-only apply and a final plan, all of which must succeed;
// then every instance must have its identity.
func runLegacyStateCommands(ctx context.Context, t *testing.T, tf *demo.Terraform) {
	t.Helper()
	run := func(args ...string) int {
		t.Helper()
		return runCLI(ctx, t, tf, args...)
	}
	if code := run("plan", "-input=false", "-out=legacy.tfplan"); code != 0 {
		t.Fatalf("plan on the state without identities exited %d", code)
	}
	planJSON, err := tf.Output(ctx, "show", "-json", "legacy.tfplan")
	if err != nil {
		t.Fatal(err)
	}
	var plan tfjson.Plan
	if err := json.Unmarshal(planJSON, &plan); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"redisstreamcoordinator_group.order_service":        "[no-op]",
		"redisstreamcoordinator_group.order_analytics":      "[no-op]",
		"redisstreamcoordinator_group_shard_count.orders":   "[no-op]",
		"redisstreamcoordinator_group.payment_service":      "[delete create]", // vanished: a new lifecycle
		"redisstreamcoordinator_group_shard_count.payments": "[create]",        // removed by its refresh
	}
	for _, rc := range plan.ResourceChanges {
		if got := fmt.Sprint(rc.Change.Actions); got != want[rc.Address] {
			t.Errorf("%s: planned %s, want %s", rc.Address, got, want[rc.Address])
		}
	}
	if t.Failed() {
		return
	}
	if code := run("apply", "-input=false", "legacy.tfplan"); code != 0 {
		t.Fatalf("apply exited %d", code)
	}
	if code := run("apply", "-input=false", "-refresh-only", "-auto-approve"); code != 0 {
		t.Fatalf("apply -refresh-only exited %d", code)
	}
	if code := run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Errorf("the plan after applying is not empty (exit %d)", code)
	}
	checkStateIdentities(t, filepath.Join(tf.Dir, "terraform.tfstate"))
}

// checkStateIdentities reads a state file: every instance of both resource
// types has its identity, the pair of its own names.
func checkStateIdentities(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			Instances []struct {
				Attributes map[string]any    `json:"attributes"`
				Identity   map[string]string `json:"identity"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range st.Resources {
		for _, in := range r.Instances {
			n++
			p, g := in.Attributes["stream_prefix"], in.Attributes["consumer_group"]
			if in.Identity["stream_prefix"] != p || in.Identity["consumer_group"] != g {
				t.Errorf("%s.%s: identity %v, want stream_prefix %v, consumer_group %v", r.Type, r.Name, in.Identity, p, g)
			}
		}
	}
	if n != 5 {
		t.Errorf("the state has %d instances, want 5", n)
	}
}
