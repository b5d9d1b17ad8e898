package provider

import (
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// stepEnv is a provider environment a step's PreConfig can change: the
// provider reads it when Terraform configures it, during the step.
type stepEnv struct {
	mu sync.Mutex
	kv map[string]string
}

func (e *stepEnv) set(kv map[string]string) func() {
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.kv = kv
	}
}

func (e *stepEnv) get(k string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.kv[k]
}

// expectedErrors is a TestCase's ErrorCheck for steps that must fail: a
// step's PreConfig says what its error must match, and the check accepts
// the error only if it matches (a space matching any white space, as
// Terraform wraps lines) and repeats none of the secrets (the whole
// output of the failed Terraform command, diagnostics and source snippets
// included). ExpectError could only match; it cannot see what else the
// output shows.
type expectedErrors struct {
	mu      sync.Mutex
	want    *regexp.Regexp
	secrets []string
	seen    []string
}

func (e *expectedErrors) expect(want string, secrets ...string) func() {
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		// Terraform wraps diagnostics: a space matches any run of white space.
		e.want, e.secrets = regexp.MustCompile(strings.ReplaceAll(want, " ", `\s+`)), secrets
	}
}

func (e *expectedErrors) check(err error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	want := e.want
	e.want = nil
	if want == nil {
		return err
	}
	out := err.Error()
	for _, secret := range e.secrets {
		if strings.Contains(out, secret) {
			return fmt.Errorf("the error output repeats the secret %q:\n%s", secret, out)
		}
	}
	if !want.MatchString(out) {
		return fmt.Errorf("want an error matching %q, got: %w", want, err)
	}
	e.seen = append(e.seen, want.String())
	return nil
}

// met is a step check: exactly n steps so far failed as expected.
func (e *expectedErrors) met(n int) func(*terraform.State) error {
	return func(*terraform.State) error {
		e.mu.Lock()
		defer e.mu.Unlock()
		if len(e.seen) != n {
			return fmt.Errorf("%d steps failed as expected (%q), want %d", len(e.seen), e.seen, n)
		}
		return nil
	}
}

// expectedDone fails the test unless each expectation was met: a step that
// must fail but passes leaves its expectation pending.
func (e *expectedErrors) done(t *testing.T, n int) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.want != nil || len(e.seen) != n {
		t.Fatalf("%d steps failed as expected (%q), want %d; pending %v", len(e.seen), e.seen, n, e.want)
	}
}

const providerRequirement = `
terraform {
  required_providers {
    redisstreamcoordinator = { source = "` + acctest.ProviderSource + `" }
  }
}
`

// An endpoint with user info, in the provider block or the environment, is
// refused, and the password appears nowhere: not in Terraform's output (the
// diagnostic and the source line it quotes) and not in the TRACE log of
// Terraform and the provider (TF_ACC_LOG=TRACE into a file). The log is
// configured through the process environment, so the test does not run in
// parallel.
func TestAccProvider_endpointUserInfoNeverPrinted(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	logPath := filepath.Join(t.TempDir(), "terraform.log")
	t.Setenv("TF_ACC_LOG", "TRACE")
	t.Setenv("TF_ACC_LOG_PATH", logPath)
	t.Setenv("TF_LOG", "TRACE")
	const endpoint = "https://tfuser:s3cr3t@127.0.0.1:1"
	secrets := []string{"s3cr3t", "tfuser"}
	env := &stepEnv{}
	errs := &expectedErrors{}
	refused := `(?s)Invalid coordinator endpoint.*contains user info; put credentials in username/password or token.*"https://127\.0\.0\.1:1"`
	group := groupHCL("test", "orders", "svc", "initial_shard_count = 1")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: map[string]func() (tfprotov6.ProviderServer, error){
			TypeName: withError(NewProtocol6(&coordinatorProvider{version: "test", getenv: env.get})),
		},
		ErrorCheck: errs.check,
		Steps: []resource.TestStep{
			{
				// In the block: refused when Terraform validates it.
				PreConfig: errs.expect(refused, secrets...),
				Config: providerRequirement + `
provider "redisstreamcoordinator" {
  endpoint = "` + endpoint + `"
  token    = "t"
}
` + group,
				PlanOnly: true,
			},
			{
				// The same, with a password url.Parse would read as a path.
				PreConfig: errs.expect(`(?s)contains user info.*"https://127\.0\.0\.1:1"`, "s3", "cr3t", "tfuser"),
				Config: providerRequirement + `
provider "redisstreamcoordinator" {
  endpoint = "https://tfuser:s3/cr3t@127.0.0.1:1"
  token    = "t"
}
` + group,
				PlanOnly: true,
			},
			{
				// From REDIS_STREAM_COORDINATOR_ENDPOINT: refused when configuring.
				PreConfig: func() {
					env.set(map[string]string{envName("endpoint"): endpoint, envName("token"): "t"})()
					errs.expect(`(?s)The endpoint \(REDIS_STREAM_COORDINATOR_ENDPOINT\) contains user info; put credentials in `+
						`username/password or token.*"https://127\.0\.0\.1:1"`, secrets...)()
				},
				Config:   providerRequirement + `provider "redisstreamcoordinator" {}` + "\n" + group,
				PlanOnly: true,
			},
		},
	})
	errs.done(t, 3)
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("reading the TRACE log: %v", err)
	}
	// The test harness logs each step's configuration, which is the test's
	// own source (a user's .tf file), not something Terraform or the
	// provider printed: its entries are left out.
	var kept []string
	harness := false
	for _, line := range strings.Split(string(raw), "\n") {
		if logEntryStart.MatchString(line) {
			harness = strings.Contains(line, " sdk.helper_resource: ")
		}
		if !harness {
			kept = append(kept, line)
		}
	}
	log := strings.Join(kept, "\n")
	// The log must hold Terraform's lines and the provider's refusal, or the
	// check below proves nothing.
	if !strings.Contains(log, "Terraform version") && !strings.Contains(log, "OpenTofu version") {
		t.Fatalf("the TRACE log (%d bytes) lacks the CLI's version line", len(log))
	}
	for _, want := range []string{"ValidateProviderConfig", "ConfigureProvider", "contains user info"} {
		if !strings.Contains(log, want) {
			t.Fatalf("the TRACE log (%d bytes) lacks %q", len(log), want)
		}
	}
	for _, secret := range append(secrets, "cr3t") {
		if i := strings.Index(log, secret); i >= 0 {
			start := max(0, i-200)
			t.Errorf("the TRACE log repeats %q: …%s…", secret, log[start:min(len(log), i+100)])
		}
	}
}

// logEntryStart matches the first line of a Terraform log entry.
var logEntryStart = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z \[[A-Z]+\] `)

// The credential rule through Terraform, against the in-repo coordinator:
// the mixes issue 29 names, each step's environment set by its PreConfig.
// No step's output, provider log or diagnostic shows a password or token.
func TestAccProvider_credentialRule(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "records the credentials the provider sends")
	rec := &authRecorder{next: c.Handler(), seen: map[string]bool{}}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	endpoint := srv.URL
	user, password := a.env.Writer.Username, a.env.Writer.Password
	const blockToken = "tfacc-block-token-S3CR3T"
	const ignoredToken = "tfacc-ignored-env-token-S3CR3T"
	env := &stepEnv{}
	errs := &expectedErrors{}
	log := &providerLog{}
	p := acctest.RandomName("creds")
	// Every secret of the test: the password, its Basic form, the literal
	// tokens, and every token the provider was issued and sent.
	secrets := func() []string {
		basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
		return append(append(rec.secrets("Bearer"), rec.secrets("Basic")...), password, basic, blockToken, ignoredToken)
	}
	// Diagnostics recorded, and the log captured, as loggingFactories does.
	factories := a.diags.Factories(TypeName, NewProtocol6(&coordinatorProvider{version: "test", getenv: env.get}))
	recording := factories[TypeName]
	factories[TypeName] = func() (tfprotov6.ProviderServer, error) {
		s, err := recording()
		if err != nil {
			return nil, err
		}
		return &loggingServer{ProviderServer: s, log: log}, nil
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_10_0)},
		ProtoV6ProviderFactories: factories,
		ErrorCheck:               errs.check,
		Steps: []resource.TestStep{
			{
				// token and username in the block: an error, whatever the
				// environment exports, and the token is not printed.
				PreConfig: func() {
					env.set(map[string]string{envName("endpoint"): endpoint, envName("password"): password})()
					errs.expect(`(?s)Conflicting credentials.*The provider block sets both token and .username.`, blockToken, password)()
				},
				Config: providerRequirement + fmt.Sprintf(`
provider "redisstreamcoordinator" {
  token    = %q
  username = %q
}
`, blockToken, user) + groupHCL("g0", p+"-0", "svc", "initial_shard_count = 1"),
				PlanOnly: true,
			},
			{
				// A username in the block with only a token exported: the
				// token is ignored, so the password is missing, and the error
				// says why.
				PreConfig: func() {
					env.set(map[string]string{envName("endpoint"): endpoint, envName("token"): ignoredToken})()
					errs.expect(`(?s)Missing password.*REDIS_STREAM_COORDINATOR_TOKEN is ignored`, ignoredToken)()
				},
				Config: providerRequirement + fmt.Sprintf(`
provider "redisstreamcoordinator" {
  username = %q
}
`, user) + groupHCL("g0", p+"-0", "svc", "initial_shard_count = 1"),
				PlanOnly: true,
			},
			{
				// A username in the block takes the exported password (Basic);
				// an exported token is ignored.
				PreConfig: func() {
					log.take()
					env.set(map[string]string{envName("endpoint"): endpoint, envName("password"): password, envName("token"): ignoredToken})()
				},
				Config: providerRequirement + fmt.Sprintf(`
provider "redisstreamcoordinator" {
  username       = %q
  retry_wait_min = "50ms"
  retry_wait_max = "500ms"
}
`, user) + groupHCL("g0", p+"-0", "svc", "initial_shard_count = 1"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("redisstreamcoordinator_group.g0", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(1)),
				},
				Check: resource.ComposeTestCheckFunc(errs.met(2),
					expectCleanLog(log, []string{"auth=basic", "credentials_from=provider block and environment",
						"ignored_credential_variables=REDIS_STREAM_COORDINATOR_TOKEN"}, secrets)),
			},
			{
				// The token example in a CI that exports username, password and
				// LOGIN=true: the default provider logs in with them, and the
				// aliased provider given only the token uses it, ignoring the
				// exported LOGIN (and the rest).
				PreConfig: func() {
					log.take()
					env.set(map[string]string{
						envName("endpoint"): endpoint, envName("username"): user, envName("password"): password,
						envName("login"): "true",
					})()
				},
				Config: providerRequirement + `
provider "redisstreamcoordinator" {
  retry_wait_min = "50ms"
  retry_wait_max = "500ms"
}

ephemeral "redisstreamcoordinator_token" "ci" {}

provider "redisstreamcoordinator" {
  alias          = "bearer"
  token          = ephemeral.redisstreamcoordinator_token.ci.token
  retry_wait_min = "50ms"
  retry_wait_max = "500ms"
}
` + groupHCL("g0", p+"-0", "svc", "initial_shard_count = 1") +
					groupHCL("g1", p+"-1", "svc", "initial_shard_count = 1", "provider = redisstreamcoordinator.bearer"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("redisstreamcoordinator_group.g1", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(1)),
				},
				Check: expectCleanLog(log, []string{"auth=login", "auth=bearer", "credentials_from=provider block"}, secrets),
			},
		},
	})
	errs.done(t, 2)
	// Nor does any diagnostic the provider returned.
	for _, d := range append(a.diags.Errors(), a.diags.Warnings()...) {
		for _, secret := range secrets() {
			if strings.Contains(d, secret) {
				t.Errorf("a diagnostic repeats a secret (%d characters): %s", len(secret), strings.ReplaceAll(d, secret, "***"))
			}
		}
	}
}
