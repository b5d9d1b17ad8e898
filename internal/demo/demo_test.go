package demo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// TestMain prepares the environment as the provider's acceptance tests do:
// the demo tests run terraform too.
func TestMain(m *testing.M) {
	if err := acctest.PrepareTerraform(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func TestCleanEnvDropsSettingsThatRedirectTerraformOrTheProvider(t *testing.T) {
	got := cleanEnv([]string{
		"PATH=/usr/bin", "HOME=/root",
		"REDIS_STREAM_COORDINATOR_ENDPOINT=https://live.example", "REDIS_STREAM_COORDINATOR_PASSWORD=secret",
		"TF_CLI_ARGS=-lock=false", "TF_CLI_ARGS_plan=-refresh=false", "TF_CLI_CONFIG_FILE=/home/me/.terraformrc",
		"TF_DATA_DIR=/tmp/x", "TF_WORKSPACE=prod", "TF_PLUGIN_CACHE_DIR=/cache", "TF_INPUT=1", "TF_LOG=DEBUG",
		`TF_REATTACH_PROVIDERS={"ghkdqhrbals/redisstreamcoordinator":{}}`,
	})
	want := []string{"PATH=/usr/bin", "HOME=/root", "TF_LOG=DEBUG"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cleanEnv = %q, want %q", got, want)
	}
}

func TestWithoutLoggingDropsEveryLogSetting(t *testing.T) {
	got := withoutLogging([]string{
		"PATH=/usr/bin", "TF_LOG=TRACE", "TF_LOG_PATH=/tmp/tf.log", "TF_LOG_CORE=DEBUG", "TF_LOG_PROVIDER=TRACE",
		"TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR=DEBUG", "TF_LOG_SDK=TRACE", "TF_LOG_SDK_PROTO=TRACE", "TF_IN_AUTOMATION=1",
	})
	want := []string{"PATH=/usr/bin", "TF_IN_AUTOMATION=1"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("withoutLogging = %q, want %q", got, want)
	}
}

func TestWriteCLIConfigOverridesOnlyTheProvider(t *testing.T) {
	path := filepath.Join(t.TempDir(), "terraform.rc")
	if err := WriteCLIConfig(path, "/opt/provider bin"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "provider_installation {\n  dev_overrides {\n    \"ghkdqhrbals/redisstreamcoordinator\" = \"/opt/provider bin\"\n  }\n  direct {}\n}\n"
	if string(b) != want {
		t.Errorf("CLI config:\n%s\nwant:\n%s", b, want)
	}
}

func TestWriteCLIConfigOverridesEachNamedProvider(t *testing.T) {
	path := filepath.Join(t.TempDir(), "terraform.rc")
	if err := WriteCLIConfig(path, "/bench/provider", DevOverride{Source: "bench/noop", Dir: "/bench/noop"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "provider_installation {\n  dev_overrides {\n" +
		"    \"ghkdqhrbals/redisstreamcoordinator\" = \"/bench/provider\"\n" +
		"    \"bench/noop\" = \"/bench/noop\"\n" +
		"  }\n  direct {}\n}\n"
	if string(b) != want {
		t.Errorf("CLI config:\n%s\nwant:\n%s", b, want)
	}
}

func TestWriteMirrorCLIConfigInstallsOnlyTheProviderFromTheMirror(t *testing.T) {
	path := filepath.Join(t.TempDir(), "terraform.rc")
	if err := WriteMirrorCLIConfig(path, "/tmp/demo mirror"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	both := `["registry.terraform.io/ghkdqhrbals/redisstreamcoordinator", "registry.opentofu.org/ghkdqhrbals/redisstreamcoordinator"]`
	want := "provider_installation {\n  filesystem_mirror {\n    path    = \"/tmp/demo mirror\"\n    include = " + both +
		"\n  }\n  direct {\n    exclude = " + both + "\n  }\n}\n"
	if string(b) != want {
		t.Errorf("CLI config:\n%s\nwant:\n%s", b, want)
	}
}

func TestInstallMirrorLaysOutEachRegistryHost(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "provider")
	if err := os.WriteFile(bin, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	mirror := filepath.Join(dir, "mirror")
	if err := InstallMirror(mirror, bin, "0.0.1"); err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
		p := filepath.Join(mirror, host, "ghkdqhrbals", "redisstreamcoordinator", "0.0.1", runtime.GOOS+"_"+runtime.GOARCH, "terraform-provider-redisstreamcoordinator_v0.0.1")
		if b, err := os.ReadFile(p); err != nil || string(b) != "binary" {
			t.Errorf("%s: %q, %v", p, b, err)
		}
	}
}

func TestAuditTrailTable(t *testing.T) {
	str := func(s string) *string { return &s }
	at := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.Local)
	var out bytes.Buffer
	printAuditTrail(&out, []coordinator.AuditEvent{
		{Timestamp: at, Action: "CREATE_GROUP", Outcome: "SUCCESS", Status: 201, StreamPrefix: "orders", ConsumerGroup: str("order-service"),
			RequestID: "terraform-run1-create-group-0a1b2c3d", RequestedBy: str("terraform:demo"), Reason: str("demo: orders")},
		{Timestamp: at, Action: "SCALE_STREAM", Outcome: "UNAUTHORIZED", Status: 401, StreamPrefix: "orders"},
	})
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a header and 2 rows, got:\n%s", out.String())
	}
	for i, want := range []*regexp.Regexp{
		regexp.MustCompile(`^\s+TIME\s+ACTION\s+GROUP\s+OUTCOME\s+REQUEST ID\s+REQUESTED BY\s+REASON$`),
		regexp.MustCompile(`^\s+03:04:05\.006\s+CREATE_GROUP\s+orders/order-service\s+SUCCESS \(201\)\s+terraform-run1-create-group-0a1b2c3d\s+terraform:demo\s+demo: orders$`),
		// A stream-level action has no group; a rejected request has no
		// request id, requestedBy or reason recorded.
		regexp.MustCompile(`^\s+03:04:05\.006\s+SCALE_STREAM\s+orders \(all groups\)\s+UNAUTHORIZED \(401\)\s+-\s+-\s+-$`),
	} {
		if !want.MatchString(lines[i]) {
			t.Errorf("line %d = %q, want match for %s", i, lines[i], want)
		}
	}
}

func TestAccDemo(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (runs terraform)")
	}
	t.Parallel()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := Run(ctx, Options{ModuleRoot: "../..", NoColor: true, Out: &out}); err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out.String())
	}
	text := out.String()
	// The provider comes from a filesystem mirror, not a dev override:
	// Terraform has no override to warn about.
	if strings.Contains(text, "Provider development overrides are in effect") {
		t.Error("the demo's output has Terraform's development overrides warning")
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^==> terraform init \(the provider from the filesystem mirror, as after make install\)$`),
		regexp.MustCompile(`Installing ghkdqhrbals/redisstreamcoordinator v0\.0\.1\.\.\.`),
		regexp.MustCompile(`(?m)^==> terraform apply -auto-approve \(the groups; the shard count stays at its initial value\)$`),
		regexp.MustCompile(`Apply complete! Resources: 3 added, 0 changed, 0 destroyed\.`),
		regexp.MustCompile(`(?m)^==> terraform plan -out=tfplan -var-file=scale\.tfvars \(the change under review\)$`),
		regexp.MustCompile(`Plan: 0 to add, 1 to change, 0 to destroy\.`),
		// The preview, read from the saved plan, before the apply.
		regexp.MustCompile(`(?s)==> Resharding preview read from the saved plan \(terraform show -json tfplan\)\n` +
			`    redisstreamcoordinator_group_shard_count\.orders \(update\): stream orders, 4 → 8 shards\n` +
			`      moved keys:          50% of partition keys change shard\n` +
			`      affected groups:     order-service \(4 shards\)\n` +
			`      completes by itself: known after apply \(it depends on consumers; the plan's warning has it as read at plan time\)\n` +
			`      based on:            metadataVersion [1-9][0-9]* \([^)\n]+\)\n` +
			`.*==> terraform apply tfplan \(exactly the reviewed plan\)`),
		regexp.MustCompile(`Apply complete! Resources: 0 added, 1 changed, 0 destroyed\.`),
		regexp.MustCompile(`(?s)==> terraform plan -detailed-exitcode \(the plan after the apply must be empty\).*No changes\.`),
		regexp.MustCompile(`orders/order-service\s+8\s+none\s+reshard-\S+ 4→8 DEPRECATED`),
		regexp.MustCompile(`payments/payment-service\s+2\s+none\s+none`),
		regexp.MustCompile(`CREATE_GROUP\s+orders/order-service\s+SUCCESS \(201\)\s+terraform-demo-\S+-create-group-[0-9a-f]{8}\s+terraform:demo\s+demo: order-service consumes the orders stream`),
		regexp.MustCompile(`CREATE_GROUP\s+payments/payment-service\s+SUCCESS \(201\)\s+terraform-demo-\S+-create-group-[0-9a-f]{8}\s+terraform:demo`),
		regexp.MustCompile(`SCALE_STREAM\s+orders \(all groups\)\s+SUCCESS \(202\)\s+terraform-demo-\S+-scale-stream-[0-9a-f]{8}\s+terraform:demo\s+demo: more consumer parallelism for orders`),
		regexp.MustCompile(`3 audited mutations`),
	} {
		if !want.MatchString(text) {
			t.Errorf("demo output lacks %s", want)
		}
	}
	// The scale happens only when the saved plan is applied: nothing is
	// scaled before the preview was printed.
	if i, j := strings.Index(text, "==> Resharding preview"), strings.Index(text, "Modifying... [id=orders/order-service]"); i < 0 || j < i {
		t.Errorf("the scale (at %d) does not come after the preview (at %d)", j, i)
	}
	if t.Failed() {
		t.Logf("demo output:\n%s", text)
	}
}

// The demo fails when the plan after the apply is not empty.
func TestAccDemoFailsOnANonEmptySecondPlan(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1 (runs terraform)")
	}
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "main.tf")
	// An output that differs on every plan never converges.
	if err := os.WriteFile(cfg, []byte(`output "now" { value = timestamp() }`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err := Run(ctx, Options{ModuleRoot: "../..", Config: cfg, NoColor: true, Out: &out})
	if err == nil || !strings.Contains(err.Error(), "the plan after the apply is not empty") {
		t.Fatalf("Run = %v, want the non-empty-plan error\n%s", err, out.String())
	}
}
