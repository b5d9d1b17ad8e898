package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"gopkg.in/yaml.v3"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// The pull-request guide's GitHub Actions workflow, replayed: the workflow
// is read from the generated page (docs/guides/pull-request-workflow.md, the
// block `make actionlint` checks), and each job runs in a fresh directory
// of its own, its `run:` steps executed as written with bash, as a runner
// does, with the job's env. The jobs share only what the guide passes
// between them: the commit (the checkout), the state backend, and the
// artifact. The `uses:` steps are stood in for: checkout copies the commit,
// setup-terraform puts the Terraform under test (TF_ACC_TERRAFORM_PATH, or
// terraform on PATH) on PATH as `terraform`, configure-aws-credentials hands
// out the state credentials of its role, and upload/download-artifact copy
// files as actions/upload-artifact@v4 does (hidden files left out unless
// include-hidden-files). The one substitution: the page's backend is s3,
// which the test cannot reach; a backend_override.tf makes it the http
// backend of a local state server with locking, and backend.tfbackend is
// that backend's settings, so `terraform init -backend-config=backend.tfbackend`
// runs as the page writes it.

const (
	pipelinePlanRole  = "arn:aws:iam::111111111111:role/streams-state-plan"
	pipelineApplyRole = "arn:aws:iam::111111111111:role/streams-state-apply"
)

type ghWorkflow struct {
	Env      map[string]string `yaml:"env"`
	Defaults struct {
		Run struct {
			WorkingDirectory string `yaml:"working-directory"`
		} `yaml:"run"`
	} `yaml:"defaults"`
	Jobs map[string]ghJob `yaml:"jobs"`
}

type ghJob struct {
	If          string            `yaml:"if"`
	Needs       string            `yaml:"needs"`
	Permissions map[string]string `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Steps       []ghStep          `yaml:"steps"`
}

type ghStep struct {
	Name string            `yaml:"name"`
	If   string            `yaml:"if"`
	Uses string            `yaml:"uses"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
	Run  string            `yaml:"run"`
}

// guideWorkflow is the pull-request guide's GitHub Actions workflow, found as
// the GNUmakefile's actionlint target finds it: the first ```yaml block after
// the '## GitHub Actions' heading of the generated page.
func guideWorkflow(t *testing.T) ghWorkflow {
	t.Helper()
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "guides", "pull-request-workflow.md"))
	if err != nil {
		t.Fatal(err)
	}
	var block []string
	section, in := false, false
	for _, line := range strings.Split(string(page), "\n") {
		switch {
		case strings.HasPrefix(line, "## GitHub Actions"):
			section = true
		case section && !in && line == "```yaml":
			in = true
		case in && line == "```":
			section, in = false, false
		case in:
			block = append(block, line)
		}
	}
	if len(block) == 0 {
		t.Fatal("docs/guides/pull-request-workflow.md has no ```yaml block after '## GitHub Actions' (run make docs)")
	}
	var wf ghWorkflow
	if err := yaml.Unmarshal([]byte(strings.Join(block, "\n")), &wf); err != nil {
		t.Fatalf("the guide's workflow does not parse: %v", err)
	}
	return wf
}

// stateServer is Terraform's http backend with locking (LOCK/UNLOCK), for
// two principals: the plan role reads the state and writes only its lock,
// the apply role writes the state too, as the guide asks of the s3 bucket.
type stateServer struct {
	mu      sync.Mutex
	state   []byte
	lockID  string
	lock    []byte
	writers map[string]bool // user -> may write the state
	denied  []string
	serial  int
}

type lockInfo struct {
	ID string `json:"ID"`
}

func (s *stateServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	user, pass, ok := r.BasicAuth()
	write, known := s.writers[user]
	if !ok || !known || pass != "pw-"+user {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	body, _ := io.ReadAll(r.Body)
	switch r.Method {
	case http.MethodGet:
		if s.state == nil {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_, _ = w.Write(s.state)
	case http.MethodPost:
		if !write {
			s.denied = append(s.denied, user+" POST "+r.URL.String())
			http.Error(w, "this role may not write the state", http.StatusForbidden)
			return
		}
		if s.lockID != "" && r.URL.Query().Get("ID") != s.lockID {
			http.Error(w, "the state is locked by another operation", http.StatusConflict)
			return
		}
		s.state = body
		s.serial++
	case "LOCK":
		if s.lockID != "" {
			w.WriteHeader(http.StatusLocked)
			_, _ = w.Write(s.lock)
			return
		}
		var li lockInfo
		if err := json.Unmarshal(body, &li); err != nil || li.ID == "" {
			http.Error(w, "bad lock info", http.StatusBadRequest)
			return
		}
		s.lockID, s.lock = li.ID, body
	case "UNLOCK":
		var li lockInfo
		_ = json.Unmarshal(body, &li)
		if s.lockID != "" && li.ID != s.lockID {
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write(s.lock)
			return
		}
		s.lockID, s.lock = "", nil
	default:
		http.Error(w, "unsupported", http.StatusMethodNotAllowed)
	}
}

// pipelineReplay runs the guide's jobs.
type pipelineReplay struct {
	t         *testing.T
	wf        ghWorkflow
	ctx       context.Context
	root      string
	bin       string // terraform (the binary under test) and a stand-in gh
	cliConfig string
	secrets   map[string]string
	vars      map[string]string
	// principals maps the guide's coordinator usernames to the test's.
	principals map[string]acctest.Credentials
	endpoint   string
	stateUsers map[string]string // role-to-assume -> state server user
	log        *strings.Builder
	dirs       int
}

// pipelineRun is one run of the workflow: one event on one commit.
type pipelineRun struct {
	event     string // push or pull_request
	runID     int
	attempt   int
	prNumber  int
	commit    map[string]string // path under the repository -> content
	artifacts map[string]map[string][]byte
}

type jobResult struct {
	ok         bool
	failedStep string
	workspace  string
	summary    string
	output     string
}

var ghExprRE = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

func (p *pipelineReplay) context(r *pipelineRun) map[string]string {
	c := map[string]string{
		"github.event_name":  r.event,
		"github.run_id":      fmt.Sprint(r.runID),
		"github.run_attempt": fmt.Sprint(r.attempt),
		"github.repository":  "acme/streams",
		"github.server_url":  "https://github.com",
		"github.sha":         fmt.Sprintf("%040x", r.runID),
		"github.token":       "ghs_replay",
		"github.ref":         "refs/heads/main",
	}
	if r.event == "pull_request" {
		c["github.event.pull_request.number"] = fmt.Sprint(r.prNumber)
		c["github.ref"] = fmt.Sprintf("refs/pull/%d/merge", r.prNumber)
	}
	for k, v := range p.secrets {
		c["secrets."+k] = v
	}
	for k, v := range p.vars {
		c["vars."+k] = v
	}
	return c
}

// expand replaces the ${{ … }} expressions the page uses; any other fails
// the test, so the replay cannot silently run something else.
func (p *pipelineReplay) expand(s string, ctx map[string]string) string {
	p.t.Helper()
	return ghExprRE.ReplaceAllStringFunc(s, func(m string) string {
		key := ghExprRE.FindStringSubmatch(m)[1]
		v, ok := ctx[key]
		if !ok {
			p.t.Fatalf("the guide's workflow uses ${{ %s }}, which the replay does not know: teach examples_pr_pipeline_test.go what it is", key)
		}
		return v
	})
}

var ghIfRE = regexp.MustCompile(`^github\.event_name == '(\w+)'$`)

func (p *pipelineReplay) cond(expr string, r *pipelineRun) bool {
	p.t.Helper()
	expr = strings.TrimSpace(expr)
	if m := ghExprRE.FindStringSubmatch(expr); m != nil && m[0] == expr {
		expr = m[1]
	}
	if expr == "" {
		return true
	}
	m := ghIfRE.FindStringSubmatch(expr)
	if m == nil {
		p.t.Fatalf("the guide's workflow has the condition %q, which the replay cannot evaluate", expr)
	}
	return r.event == m[1]
}

// baseEnv is the process environment a runner would give a step: the
// test's environment without what would leak into Terraform or the
// provider, and with the replay's CLI configuration (the mirror), HOME and
// PATH.
func (p *pipelineReplay) baseEnv(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "REDIS_STREAM_COORDINATOR_"), strings.HasPrefix(name, "TF_"),
			strings.HasPrefix(name, "AWS_"), strings.HasPrefix(name, "GITHUB_"),
			strings.HasPrefix(name, "GH_"), name == "HOME", name == "PATH",
			strings.EqualFold(name, "HTTP_PROXY"), strings.EqualFold(name, "HTTPS_PROXY"), strings.EqualFold(name, "NO_PROXY"):
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home, "PATH="+p.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"CHECKPOINT_DISABLE=1", "TF_CLI_CONFIG_FILE="+p.cliConfig,
		"HTTPS_PROXY="+offlineProxy, "HTTP_PROXY="+offlineProxy, "NO_PROXY=127.0.0.1,localhost",
		"GITHUB_ACTIONS=true", "CI=true")
}

// runJob runs one job of the workflow in a fresh directory. Steps after
// the first failing one are not run, as on GitHub.
func (p *pipelineReplay) runJob(name string, job ghJob, r *pipelineRun) jobResult {
	t := p.t
	t.Helper()
	p.dirs++
	dir := filepath.Join(p.root, fmt.Sprintf("%02d-run%d.%d-%s-%s", p.dirs, r.runID, r.attempt, r.event, name))
	workspace, home := filepath.Join(dir, "workspace"), filepath.Join(dir, "home")
	for _, d := range []string{workspace, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	summary := filepath.Join(dir, "step-summary.md")
	res := jobResult{workspace: workspace}
	ctx := p.context(r)
	fmt.Fprintf(p.log, "\n=== run %d attempt %d (%s), job %s in %s\n", r.runID, r.attempt, r.event, name, workspace)

	// The job's env: the workflow's, the job's, and what a runner sets.
	jobEnv := map[string]string{}
	for k, v := range p.wf.Env {
		jobEnv[k] = p.expand(v, ctx)
	}
	for k, v := range job.Env {
		jobEnv[k] = p.expand(v, ctx)
	}
	if _, ok := jobEnv["REDIS_STREAM_COORDINATOR_ENDPOINT"]; !ok {
		t.Fatalf("job %s has no REDIS_STREAM_COORDINATOR_ENDPOINT", name)
	}
	jobEnv["REDIS_STREAM_COORDINATOR_ENDPOINT"] = p.endpoint
	if u, ok := jobEnv["REDIS_STREAM_COORDINATOR_USERNAME"]; ok {
		c, known := p.principals[u]
		if !known {
			t.Fatalf("job %s plans or applies as %q, which the replay does not map onto the test coordinator's principals", name, u)
		}
		if jobEnv["REDIS_STREAM_COORDINATOR_PASSWORD"] != c.Password {
			t.Fatalf("job %s pairs username %q with another principal's password secret", name, u)
		}
		jobEnv["REDIS_STREAM_COORDINATOR_USERNAME"] = c.Username
	}
	jobEnv["GITHUB_RUN_ID"] = ctx["github.run_id"]
	jobEnv["GITHUB_RUN_ATTEMPT"] = ctx["github.run_attempt"]
	jobEnv["GITHUB_EVENT_NAME"] = r.event
	jobEnv["GITHUB_WORKSPACE"] = workspace
	jobEnv["GITHUB_STEP_SUMMARY"] = summary
	jobEnv["FAKE_GH_COMMENTS"] = filepath.Join(p.root, "comments")

	workDir := p.wf.Defaults.Run.WorkingDirectory
	for i, st := range job.Steps {
		label := st.Name
		if label == "" {
			label = strings.TrimSpace(st.Uses + st.Run)
		}
		if !p.cond(st.If, r) {
			fmt.Fprintf(p.log, "--- step %d skipped (if: %s): %s\n", i+1, st.If, label)
			continue
		}
		fmt.Fprintf(p.log, "--- step %d: %s\n", i+1, label)
		with := map[string]string{}
		for k, v := range st.With {
			with[k] = p.expand(v, ctx)
		}
		action, _, _ := strings.Cut(st.Uses, "@")
		switch {
		case st.Run != "":
			script := p.expand(st.Run, ctx)
			env := p.baseEnv(home)
			for k, v := range jobEnv {
				env = append(env, k+"="+v)
			}
			for k, v := range st.Env {
				env = append(env, k+"="+p.expand(v, ctx))
			}
			// GitHub's bash: bash --noprofile --norc -eo pipefail {0}.
			cmd := exec.CommandContext(p.ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
			cmd.Dir = filepath.Join(workspace, workDir)
			cmd.Env = env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = io.MultiWriter(&out, p.log), io.MultiWriter(&out, p.log)
			err := cmd.Run()
			res.output += out.String()
			if err != nil {
				fmt.Fprintf(p.log, "--- step %d failed: %v\n", i+1, err)
				res.failedStep = script
				res.summary = readFileOrEmpty(summary)
				return res
			}
		case action == "actions/checkout":
			for path, content := range r.commit {
				f := filepath.Join(workspace, path)
				if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		case action == "aws-actions/configure-aws-credentials":
			// The backend's credentials for the role: the stand-in state
			// server's user of that role (TF_HTTP_* for the http backend).
			user, ok := p.stateUsers[with["role-to-assume"]]
			if !ok {
				t.Fatalf("job %s assumes role %q, which the replay does not know", name, with["role-to-assume"])
			}
			jobEnv["TF_HTTP_USERNAME"], jobEnv["TF_HTTP_PASSWORD"] = user, "pw-"+user
		case action == "hashicorp/setup-terraform":
			// The replay runs terraform itself, not setup-terraform's
			// wrapper, which would keep the runner's signals from it.
			if with["terraform_wrapper"] != "false" {
				t.Fatalf("job %s uses setup-terraform's wrapper (terraform_wrapper: %q), which keeps show -json output unclean and the runner's signals from terraform", name, with["terraform_wrapper"])
			}
		case action == "actions/upload-artifact":
			files := map[string][]byte{}
			var paths []string
			for _, l := range strings.Split(with["path"], "\n") {
				if l = strings.TrimSpace(l); l != "" {
					paths = append(paths, l)
				}
			}
			base := commonDir(paths)
			for _, rel := range paths {
				if strings.HasPrefix(filepath.Base(rel), ".") && with["include-hidden-files"] != "true" {
					fmt.Fprintf(p.log, "upload-artifact: leaves out the hidden file %s\n", rel)
					continue
				}
				b, err := os.ReadFile(filepath.Join(workspace, rel))
				if err != nil {
					res.failedStep = st.Uses + ": " + err.Error()
					return res
				}
				key, _ := filepath.Rel(base, rel)
				files[key] = b
			}
			if _, dup := r.artifacts[with["name"]]; dup {
				res.failedStep = st.Uses + ": an artifact named " + with["name"] + " already exists in this run"
				return res
			}
			r.artifacts[with["name"]] = files
		case action == "actions/download-artifact":
			files, ok := r.artifacts[with["name"]]
			if !ok {
				res.failedStep = st.Uses + ": no artifact named " + with["name"]
				return res
			}
			for rel, b := range files {
				f := filepath.Join(workspace, with["path"], rel)
				if err := os.WriteFile(f, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		default:
			t.Fatalf("job %s uses %s, which the replay cannot stand in for", name, st.Uses)
		}
	}
	res.ok = true
	res.summary = readFileOrEmpty(summary)
	return res
}

// commonDir is the deepest folder holding every path, as upload-artifact
// roots an artifact.
func commonDir(paths []string) string {
	if len(paths) == 0 {
		return "."
	}
	dir := filepath.Dir(paths[0])
	for _, p := range paths[1:] {
		for dir != "." && !strings.HasPrefix(p, dir+"/") {
			dir = filepath.Dir(dir)
		}
	}
	return dir
}

func readFileOrEmpty(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// installToMirror builds the provider at version into the filesystem mirror,
// in the unpacked layout <host>/<namespace>/<type>/<version>/<os>_<arch>/.
func installToMirror(ctx context.Context, t *testing.T, mirror, host, version string) {
	t.Helper()
	dir := filepath.Join(mirror, host, acctest.ProviderSource, version, runtime.GOOS+"_"+runtime.GOARCH)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	bin, err := demo.BuildProvider(ctx, "../..", dir, version)
	if err != nil {
		t.Fatalf("build provider %s: %v", version, err)
	}
	if err := os.Rename(bin, bin+"_v"+version); err != nil {
		t.Fatal(err)
	}
}

const fakeGH = `#!/bin/sh
# gh pr comment <number> [--edit-last] --body-file <file>, as the guide calls it.
set -eu
[ "$1 $2" = "pr comment" ] || { echo "gh (replay): unexpected: $*" >&2; exit 2; }
[ -n "${GH_TOKEN:-}" ] || { echo "gh (replay): no GH_TOKEN" >&2; exit 4; }
n=$3; shift 3; edit=0; body=
while [ $# -gt 0 ]; do
  case $1 in
    --edit-last) edit=1 ;;
    --body-file) body=$2; shift ;;
    *) echo "gh (replay): unexpected $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$FAKE_GH_COMMENTS"
f="$FAKE_GH_COMMENTS/pr-$n.md"
if [ "$edit" = 1 ] && [ ! -f "$f" ]; then echo "no comments found for current user" >&2; exit 1; fi
cp "$body" "$f"
`

// TestAccPullRequestWorkflow_pipelineReplay replays the guide's GitHub
// Actions workflow (see the top of this file) through three pipelines on
// one state: the deployment before the pull request; the guide's pull
// request (its pull_request plan comments, then its push pipeline: the plan
// job plans with the READ principal and the state's plan role, the apply
// job applies the saved plan with the WRITE principal); and a second change
// planned before that apply, whose queued apply is refused as stale and is
// planned again by re-running the workflow. Each plan plans only its change
// (no create of a group that exists); a final plan is empty. The provider
// comes from a filesystem mirror (no dev overrides): the committed lock
// file pins 0.1.0 while the mirror also has 0.1.1, both jobs' init keep it
// unchanged, and without it the apply job's init would pick 0.1.1, whose
// apply of the saved plan Terraform refuses.
func TestAccPullRequestWorkflow_pipelineReplay(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	t.Parallel()
	env := acctest.New(t, acctest.Options{EveryNewerCLI: true}) // each CLI's registry host
	coord := env.RequireInRepo(t, "the guide's configuration uses fixed names such as orders/order-service, which would collide on a shared coordinator")
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	wf := guideWorkflow(t)
	plan, apply := wf.Jobs["plan"], wf.Jobs["apply"]
	if len(plan.Steps) == 0 || len(apply.Steps) == 0 {
		t.Fatalf("the guide's workflow has no plan and apply jobs: %v", wf.Jobs)
	}
	if apply.Needs != "plan" || apply.If != "github.event_name == 'push'" {
		t.Errorf("the apply job must need plan and run on push only: needs %q, if %q", apply.Needs, apply.If)
	}
	if len(apply.Permissions) == 0 || apply.Permissions["contents"] != "read" {
		t.Errorf("the apply job must have a permissions block with contents: read: %v", apply.Permissions)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root := t.TempDir()
	log := &strings.Builder{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pipeline replay:\n%s", log.String())
		}
	})

	// The runner's tools: terraform (the binary under test) and gh.
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mustAbs(t, tfBin), filepath.Join(bin, "terraform")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "gh"), []byte(fakeGH), 0o700); err != nil {
		t.Fatal(err)
	}

	// The provider comes from a filesystem mirror, as from a registry.
	host := cliRegistryHost(t, tfBin)
	mirror := filepath.Join(root, "mirror")
	installToMirror(ctx, t, mirror, host, "0.1.0")
	cliConfig := filepath.Join(root, "mirror.tfrc")
	if err := os.WriteFile(cliConfig, []byte(fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path    = %q\n    include = [\"*/*\"]\n  }\n}\n", mirror)), 0o600); err != nil {
		t.Fatal(err)
	}

	// The state backend, with locking: the plan role reads, the apply role writes.
	state := &stateServer{writers: map[string]bool{"streams-state-plan": false, "streams-state-apply": true}}
	srv := httptest.NewServer(state)
	defer srv.Close()
	addr := srv.URL + "/state/streams"
	backendSettings := fmt.Sprintf("address        = %q\nlock_address   = %q\nunlock_address = %q\n", addr, addr, addr)

	p := &pipelineReplay{
		t: t, wf: wf, ctx: ctx, root: root, bin: bin, cliConfig: cliConfig, log: log,
		secrets: map[string]string{
			"COORDINATOR_PLAN_PASSWORD":      env.Reader.Password,
			"COORDINATOR_TERRAFORM_PASSWORD": env.Writer.Password,
		},
		vars:       map[string]string{"STATE_PLAN_ROLE_ARN": pipelinePlanRole, "STATE_APPLY_ROLE_ARN": pipelineApplyRole},
		principals: map[string]acctest.Credentials{"terraform-plan": env.Reader, "terraform-ci": env.Writer},
		stateUsers: map[string]string{pipelinePlanRole: "streams-state-plan", pipelineApplyRole: "streams-state-apply"},
		endpoint:   env.Endpoint,
	}

	// The commits: streams/ holds the guide's files, the backend as an
	// override for the test, and the lock file a developer's init wrote.
	guideMain := readExampleFile(t, prGuideDir+"main.tf")
	before := replaceOnce(t, guideMain, "shard_count    = 12", "shard_count    = 8")
	before = replaceOnce(t, before, `stream_prefix       = "payments-v2"`, `stream_prefix       = "payments"`)
	second := guideMain + `
resource "redisstreamcoordinator_group" "refunds" {
  stream_prefix       = "refunds"
  consumer_group      = "refund-service"
  initial_shard_count = 2
  reason              = "a second change, queued behind the first"
}
`
	commitOf := func(mainTF, lock string) map[string]string {
		c := map[string]string{
			"streams/main.tf":             mainTF,
			"streams/backend.tf":          readExampleFile(t, prGuideDir+"backend.tf"),
			"streams/backend_override.tf": "terraform {\n  backend \"http\" {}\n}\n",
			"streams/backend.tfbackend":   backendSettings,
			"streams/preview.jq":          readExampleFile(t, prGuideDir+"preview.jq"),
		}
		if lock != "" {
			c["streams/.terraform.lock.hcl"] = lock
		}
		return c
	}
	lock := developerLockFile(ctx, t, tfBin, cliConfig, filepath.Join(root, "developer"), commitOf(before, ""), log)
	if !strings.Contains(lock, `version     = "0.1.0"`) {
		t.Fatalf("the developer's lock file does not pin 0.1.0:\n%s", lock)
	}
	// A newer build that `~> 0.1` also accepts: only the lock file keeps
	// both jobs on the one the lock file names.
	installToMirror(ctx, t, mirror, host, "0.1.1")

	lockKept := func(job string, res jobResult) {
		t.Helper()
		got, err := os.ReadFile(filepath.Join(res.workspace, "streams", ".terraform.lock.hcl"))
		if err != nil || string(got) != lock {
			t.Errorf("job %s: terraform init changed the committed lock file (%v):\n%s", job, err, got)
		}
		installed := filepath.Join(res.workspace, "streams", ".terraform", "providers", host, acctest.ProviderSource)
		if _, err := os.Stat(filepath.Join(installed, "0.1.0")); err != nil {
			t.Errorf("job %s did not install the locked 0.1.0: %v", job, err)
		}
		if _, err := os.Stat(filepath.Join(installed, "0.1.1")); err == nil {
			t.Errorf("job %s installed 0.1.1, which the lock file does not name", job)
		}
	}
	mutations := func() int {
		n := 0
		for _, e := range coord.AuditEvents() {
			if e.Method != http.MethodGet {
				n++
			}
		}
		return n
	}
	planJob := func(r *pipelineRun) jobResult {
		t.Helper()
		sent := mutations()
		res := p.runJob("plan", plan, r)
		if !res.ok {
			t.Fatalf("run %d: the plan job failed at %q:\n%s", r.runID, res.failedStep, res.output)
		}
		if n := mutations() - sent; n != 0 {
			t.Errorf("run %d: the plan job sent %d mutation(s) to the coordinator, want none", r.runID, n)
		}
		lockKept(fmt.Sprintf("plan (run %d)", r.runID), res)
		return res
	}
	applyJob := func(r *pipelineRun) jobResult {
		t.Helper()
		res := p.runJob("apply", apply, r)
		if res.ok {
			lockKept(fmt.Sprintf("apply (run %d)", r.runID), res)
		}
		return res
	}
	wantSummary := func(res jobResult, counts string) {
		t.Helper()
		if !strings.Contains(res.summary, counts) {
			t.Errorf("the plan job's summary does not say %q:\n%s", counts, res.summary)
		}
	}
	newRun := func(event string, runID int, commit map[string]string) *pipelineRun {
		return &pipelineRun{event: event, runID: runID, attempt: 1, prNumber: 42, commit: commit, artifacts: map[string]map[string][]byte{}}
	}

	// Pipeline 1: the deployment before the pull request, from an empty state.
	run1 := newRun("push", 1001, commitOf(before, lock))
	wantSummary(planJob(run1), "1 shard count change(s), 3 group(s) created, 0 group(s) deleted or re-created.")
	if res := applyJob(run1); !res.ok {
		t.Fatalf("pipeline 1's apply job failed at %q:\n%s", res.failedStep, res.output)
	}
	for _, g := range []string{"order-service", "order-analytics"} {
		if err := waitJoined(ctx, env.StartConsumer(t, "orders", g)); err != nil {
			t.Fatal(err)
		}
	}

	// Pipeline 2, the guide's pull request: its pull_request plan comments.
	pr := planJob(newRun("pull_request", 1002, commitOf(guideMain, lock)))
	comment, err := os.ReadFile(filepath.Join(root, "comments", "pr-42.md"))
	if err != nil || !strings.Contains(string(comment), "stream `orders` **8 → 12 shards**") {
		t.Errorf("the pull request's comment lacks the resharding preview (%v):\n%s", err, comment)
	}
	if len(pr.summary) == 0 {
		t.Error("the pull_request plan wrote no job summary")
	}
	// After the merge: the plan job plans only the change.
	run2 := newRun("push", 1003, commitOf(guideMain, lock))
	wantSummary(planJob(run2), "1 shard count change(s), 0 group(s) created, 1 group(s) deleted or re-created.")

	// Pipeline 3 plans a second change while pipeline 2's apply waits.
	run3 := newRun("push", 1004, commitOf(second, lock))
	wantSummary(planJob(run3), "1 shard count change(s), 1 group(s) created, 1 group(s) deleted or re-created.")

	// Without the lock file the apply job's init takes 0.1.1, and Terraform
	// refuses to apply a plan made with 0.1.0.
	unlocked := newRun("push", 1003, commitOf(guideMain, ""))
	unlocked.artifacts = run2.artifacts
	noLock := apply
	noLock.Steps = append([]ghStep(nil), apply.Steps...)
	for i, st := range noLock.Steps {
		noLock.Steps[i].Run = strings.ReplaceAll(st.Run, " -lockfile=readonly", "")
	}
	if res := p.runJob("apply-without-lock-file", noLock, unlocked); res.ok || !strings.Contains(strings.Join(strings.Fields(res.output), " "), "Inconsistent dependency lock file") {
		t.Errorf("applying the saved plan with the provider init picks without the lock file did not fail on the dependency lock (ok %v):\n%s", res.ok, res.output)
	}

	// Pipeline 2's apply: the WRITE principal applies the reviewed plan.
	if res := applyJob(run2); !res.ok {
		t.Fatalf("pipeline 2's apply job failed at %q:\n%s", res.failedStep, res.output)
	}
	if g, err := env.Client().GetGroup(ctx, "orders", "order-analytics"); err != nil || g.ShardCount != 12 {
		t.Errorf("orders/order-analytics after pipeline 2: %+v %v, want 12 shards", g, err)
	}
	var scaledBy []string
	for _, e := range coord.AuditEvents() {
		if e.Method != http.MethodGet && strings.HasPrefix(e.RequestID, "terraform-1003-1-") {
			scaledBy = append(scaledBy, e.Principal)
		}
	}
	sort.Strings(scaledBy)
	if len(scaledBy) == 0 || scaledBy[0] != env.Writer.Username || scaledBy[len(scaledBy)-1] != env.Writer.Username {
		t.Errorf("pipeline 2's mutations (request ids terraform-1003-1-…) were sent by %v, want the WRITE principal %s only", scaledBy, env.Writer.Username)
	}

	// Pipeline 3's queued apply: its plan predates pipeline 2's apply.
	sent := mutations()
	res := applyJob(run3)
	if res.ok || !strings.Contains(res.output, "Saved plan is stale") {
		t.Errorf("the queued apply of a plan made before the previous apply was not refused as stale (ok %v):\n%s", res.ok, res.output)
	}
	if n := mutations() - sent; n != 0 {
		t.Errorf("the stale apply sent %d mutation(s), want none", n)
	}
	// The re-plan step: re-run all jobs of that run (a new attempt).
	run3.attempt = 2
	wantSummary(planJob(run3), "0 shard count change(s), 1 group(s) created, 0 group(s) deleted or re-created.")
	if res := applyJob(run3); !res.ok {
		t.Fatalf("the re-run of pipeline 3's apply failed at %q:\n%s", res.failedStep, res.output)
	}

	// Nothing is left to do, and the plan role never wrote the state.
	final := plan
	final.Steps = nil
	for _, st := range plan.Steps {
		final.Steps = append(final.Steps, st)
		if strings.HasPrefix(strings.TrimSpace(st.Run), "terraform init") {
			break
		}
	}
	final.Steps = append(final.Steps, ghStep{Run: "terraform plan -input=false -detailed-exitcode"})
	if res := p.runJob("final-plan", final, newRun("push", 1005, commitOf(second, lock))); !res.ok {
		t.Errorf("the plan after the pipelines is not empty (failed at %q):\n%s", res.failedStep, res.output)
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	if len(state.denied) != 0 {
		t.Errorf("the plan role tried to write the state: %v", state.denied)
	}
	if state.lockID != "" {
		t.Errorf("the state is still locked after the pipelines: %s", state.lock)
	}
}

// developerLockFile is the lock file `terraform init` writes for the
// commit, as a developer commits it.
func developerLockFile(ctx context.Context, t *testing.T, tfBin, cliConfig, dir string, commit map[string]string, log io.Writer) string {
	t.Helper()
	for path, content := range commit {
		f := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tf := &demo.Terraform{
		Bin: tfBin, Dir: filepath.Join(dir, "streams"), CLIConfig: cliConfig,
		Env:    []string{"HOME=" + dir, "HTTPS_PROXY=" + offlineProxy, "HTTP_PROXY=" + offlineProxy, "NO_PROXY="},
		Stdout: log, Stderr: log,
	}
	if code := runCLI(ctx, t, tf, "init", "-input=false", "-backend=false"); code != 0 {
		t.Fatalf("the developer's terraform init exited %d", code)
	}
	b, err := os.ReadFile(filepath.Join(tf.Dir, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
