package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// The pull-request workflow guide (templates/guides/pull-request-workflow.md.tmpl)
// shows a streams configuration and a jq program that renders a saved plan
// into a pull-request comment. Both are tested here, not by exampleCases.
var examplesTestedElsewhere = map[string]string{
	prGuideDir + "main.tf":               "TestAccPullRequestWorkflow_PreviewComment",
	prGuideDir + "preview.jq":            "TestPullRequestWorkflowPreviewGolden, TestAccPullRequestWorkflow_PreviewComment",
	prGuideDir + "backend.tf":            "TestAccPullRequestWorkflow_pipelineReplay",
	prGuideDir + "backend.tfbackend":     "TestAccPullRequestWorkflow_pipelineReplay",
	prGuideDir + "drift.yml":             "make actionlint (a GitHub Actions workflow)",
	"guides/private-registry/publish.tf": "not applied here: it needs an HCP Terraform organization",
	prGuideDir + "gitlab-ci.yml":         "GitLab CI: not run in this repository; the guide links to it",
}

const prGuideDir = "guides/pull-request-workflow/"

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata golden files from the current output")

// runPreviewJQ runs the guide's jq program on a `terraform show -json` plan,
// exactly as the guide's CI job does: jq -r -f preview.jq plan.json.
func runPreviewJQ(t *testing.T, planJSON string) string {
	t.Helper()
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Fatalf("the pull-request guide's preview.jq is tested with the jq it documents, which is not on PATH: install it (apt-get install jq; GitHub's runners have it): %v", err)
	}
	cmd := exec.Command(jq, "-r", "-f", filepath.Join(examplesDir, prGuideDir, "preview.jq"), planJSON)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jq -r -f preview.jq %s: %v\n%s", filepath.Base(planJSON), err, stderr.String())
	}
	return string(out)
}

// TestPullRequestWorkflowPreviewGolden renders a fixed plan (the JSON
// `terraform show -json` writes for the guide's change, with the
// `resharding` preview of a shard count update, a blocked scale-out, a
// create on a group created in the same apply, and a re-created group) and
// compares the comment with the golden file. Update it with
// `go test -run TestPullRequestWorkflowPreviewGolden ./internal/provider/ -update-golden`.
func TestPullRequestWorkflowPreviewGolden(t *testing.T) {
	got := runPreviewJQ(t, filepath.Join("testdata", "pr-workflow", "plan.json"))
	golden := filepath.Join("testdata", "pr-workflow", "comment.md")
	if *updateGolden {
		if err := os.WriteFile(golden, []byte(got), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("preview.jq output differs from %s:\n--- got\n%s\n--- want\n%s", golden, got, want)
	}
}

// TestPullRequestWorkflowPreviewIgnoresOtherProviders: a plan without this
// provider's resources renders an empty summary, and other providers'
// replacements are not listed.
func TestPullRequestWorkflowPreviewIgnoresOtherProviders(t *testing.T) {
	plan := filepath.Join(t.TempDir(), "plan.json")
	src := `{"terraform_version":"1.11.4","resource_changes":[{"address":"terraform_data.x","mode":"managed","type":"terraform_data",
	"change":{"actions":["delete","create"],"before":{},"after":{}}}]}`
	if err := os.WriteFile(plan, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := runPreviewJQ(t, plan)
	want := "### Redis Stream Coordinator: plan preview\n\n" +
		"Terraform 1.11.4, read from the saved plan. 0 shard count change(s), 0 group(s) created, 0 group(s) deleted or re-created.\n\n"
	if got != want {
		t.Errorf("got:\n%q\nwant:\n%q", got, want)
	}
}

// TestAccPullRequestWorkflow_PreviewComment runs the guide's workflow with
// the terraform CLI: the deployment before the pull request is applied, a
// READ principal plans the guide's configuration with -out, `terraform show
// -json` and preview.jq render the comment (the resharding preview of the
// 8 → 12 change with both groups of the prefix, and the re-created group),
// the WRITE principal applies the saved plan, and a fresh plan is empty.
func TestAccPullRequestWorkflow_PreviewComment(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	t.Parallel()
	env := acctest.New(t, acctest.Options{})
	coord := env.RequireInRepo(t, "the guide's configuration uses fixed names such as orders/order-service, which would collide on a shared coordinator")

	after := readExampleFile(t, prGuideDir+"main.tf")
	before := replaceOnce(t, after, "shard_count    = 12", "shard_count    = 8")
	before = replaceOnce(t, before, `stream_prefix       = "payments-v2"`, `stream_prefix       = "payments"`)

	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	tf, ctx := cliTerraform(t, tfBin)
	if err := os.MkdirAll(tf.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	as := func(c acctest.Credentials) {
		tf.Env = []string{
			"REDIS_STREAM_COORDINATOR_ENDPOINT=" + env.Endpoint,
			"REDIS_STREAM_COORDINATOR_USERNAME=" + c.Username,
			"REDIS_STREAM_COORDINATOR_PASSWORD=" + c.Password,
			"REDIS_STREAM_COORDINATOR_RUN_ID=pr-workflow-test",
		}
	}
	run := func(args ...string) int {
		t.Helper()
		return runCLI(ctx, t, tf, args...)
	}
	writeMain := func(cfg string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(tf.Dir, "main.tf"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// The deployment before the pull request, with its consumers running.
	as(env.Writer)
	writeMain(before)
	if code := run("apply", "-input=false", "-auto-approve"); code != 0 {
		t.Fatalf("applying the configuration before the pull request exited %d", code)
	}
	for _, g := range []string{"order-service", "order-analytics"} {
		if err := waitJoined(ctx, env.StartConsumer(t, "orders", g)); err != nil {
			t.Fatal(err)
		}
	}

	// The PR job: a READ principal plans the change and keeps the plan.
	writeMain(after)
	as(env.Reader)
	auditedBefore := len(coord.AuditEvents())
	if code := run("plan", "-input=false", "-out=tfplan"); code != 0 {
		t.Fatalf("the READ principal's plan exited %d", code)
	}
	if n := len(coord.AuditEvents()) - auditedBefore; n != 0 {
		t.Errorf("planning sent %d audited request(s) to the coordinator, want none", n)
	}
	planJSON, err := tf.Output(ctx, "show", "-json", "tfplan")
	if err != nil {
		t.Fatal(err)
	}
	var plan tfjson.Plan
	if err := json.Unmarshal(planJSON, &plan); err != nil {
		t.Fatalf("decode plan: %v", err)
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(planFile, planJSON, 0o600); err != nil {
		t.Fatal(err)
	}
	comment := runPreviewJQ(t, planFile)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile("(?m)^- \\*\\*redisstreamcoordinator_group_shard_count\\.orders\\*\\* \\(update\\): stream `orders` \\*\\*8 → 12 shards\\*\\*$"),
		regexp.MustCompile(`(?m)^  - moved partition keys: 66\.67%$`),
		regexp.MustCompile("(?m)^  - rescaled groups \\(current shard count\\): `order-analytics` \\(8\\), `order-service` \\(8\\)$"),
		regexp.MustCompile(`(?m)^  - completes by itself: known after apply \(it depends on consumers or migrations of groups`), // order-analytics: another group (issue 23 §1)
		regexp.MustCompile(`(?m)^  - based on: metadataVersion [1-9][0-9]* \(read from the coordinator at plan time\)$`),
		regexp.MustCompile("(?m)^- \\*\\*redisstreamcoordinator_group\\.payments\\*\\* \\(replace\\): `payments/payment-service` → `payments-v2/payment-service`; forced by `stream_prefix`; deletion_policy ABANDON: the old group stays on the coordinator"),
		regexp.MustCompile(`1 shard count change\(s\), 0 group\(s\) created, 1 group\(s\) deleted or re-created\.`),
	} {
		if !want.MatchString(comment) {
			t.Errorf("the PR comment lacks %s", want)
		}
	}
	// The guide shows this comment: it must be what the guide's change renders.
	if shown, rendered := normalizeComment(guideSampleComment(t)), normalizeComment(comment); shown != rendered {
		t.Errorf("the guide's sample comment differs from the rendered one (metadataVersion and Terraform version aside):\n--- guide\n%s\n--- rendered\n%s", shown, rendered)
	}
	if t.Failed() {
		t.Logf("PR comment rendered from the saved plan:\n%s", comment)
	}

	// The apply job: the WRITE principal applies exactly the saved plan.
	as(env.Writer)
	if code := run("apply", "-input=false", "tfplan"); code != 0 {
		t.Fatalf("the WRITE principal's apply of the saved plan exited %d", code)
	}
	g, err := env.Client().GetGroup(ctx, "orders", "order-analytics")
	if err != nil {
		t.Fatal(err)
	}
	if g.ShardCount != 12 {
		t.Errorf("orders/order-analytics has %d shards after the apply, want 12", g.ShardCount)
	}
	as(env.Reader)
	if code := run("plan", "-input=false", "-detailed-exitcode"); code != 0 {
		t.Errorf("the plan after applying the saved plan is not empty (exit %d)", code)
	}
}

// waitJoined waits until the coordinator has accepted c as a live member:
// a scale-out planned before that would be blocked on a consumer.
func waitJoined(ctx context.Context, c *acctest.Consumer) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !c.Joined() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("consumer %s never joined: %w", c.MemberID, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// guideSampleComment is the ```markdown block of the pull-request guide.
func guideSampleComment(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "templates", "guides", "pull-request-workflow.md.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n```markdown\n")
	block, _, closed := strings.Cut(rest, "\n```\n")
	if !ok || !closed {
		t.Fatal("the pull-request guide has no ```markdown block with the sample comment")
	}
	return block
}

var (
	metadataVersionRE  = regexp.MustCompile(`metadataVersion [0-9]+`)
	terraformVersionRE = regexp.MustCompile(`^Terraform [^ ,]+,`)
)

// normalizeComment replaces what depends on the run (the coordinator's
// metadataVersion, the Terraform version) and trims the trailing newlines.
func normalizeComment(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		l = metadataVersionRE.ReplaceAllString(l, "metadataVersion N")
		lines[i] = terraformVersionRE.ReplaceAllString(l, "Terraform X,")
	}
	return strings.Join(lines, "\n")
}

func readExampleFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(examplesDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// replaceOnce replaces old, which must occur exactly once, so that the test
// fails instead of silently testing something else when the example changes.
func replaceOnce(t *testing.T, s, old, repl string) string {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("want exactly one %q in the example, found %d", old, n)
	}
	return strings.Replace(s, old, repl, 1)
}
