// Package acctest is the acceptance-test harness: it gives each test a
// coordinator to run against and the provider configuration that reaches it.
//
// By default every test starts its own in-repo coordinator on a random
// loopback port. When TF_ACC_COORDINATOR_ENDPOINT is set, tests run against
// that real coordinator instead, with credentials from the TF_ACC_COORDINATOR_*
// variables. The provider's own REDIS_STREAM_COORDINATOR_* variables are never
// used for this: a developer may have them exported for a live system.
package acctest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	sdkacctest "github.com/hashicorp/terraform-plugin-testing/helper/acctest"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// Opt-in variables for a real coordinator.
const (
	EnvEndpoint       = "TF_ACC_COORDINATOR_ENDPOINT"
	EnvWriteUsername  = "TF_ACC_COORDINATOR_WRITE_USERNAME"
	EnvWritePassword  = "TF_ACC_COORDINATOR_WRITE_PASSWORD"
	EnvReadUsername   = "TF_ACC_COORDINATOR_READ_USERNAME"
	EnvReadPassword   = "TF_ACC_COORDINATOR_READ_PASSWORD"
	EnvMemberUsername = "TF_ACC_COORDINATOR_MEMBER_USERNAME"
	EnvMemberPassword = "TF_ACC_COORDINATOR_MEMBER_PASSWORD"
	// EnvNumbering = "alternative" starts each in-repo coordinator with
	// coordinator.AlternativeNumbering, to check that the suite asserts the
	// contract rather than the stand-in's own version and epoch numbers.
	EnvNumbering = "TF_ACC_INREPO_NUMBERING"
)

// ProviderSource is the provider's source address in test configurations.
// terraform-plugin-testing serves the provider under the namespace in
// TF_ACC_PROVIDER_NAMESPACE, which PrepareTerraform sets to match.
const ProviderSource = ProviderNamespace + "/redisstreamcoordinator"

// ProviderNamespace is the provider's registry namespace.
const ProviderNamespace = "ghkdqhrbals"

// Credentials of one coordinator principal.
type Credentials struct{ Username, Password string }

// The principals the in-repo coordinator is started with, mirroring a
// production setup: a dedicated WRITE principal for Terraform, a READ one for
// plans and dashboards, a MEMBER one for consumers.
var (
	inRepoWriter = Credentials{"tfacc-writer", "tfacc-writer-pass"}
	inRepoReader = Credentials{"tfacc-reader", "tfacc-reader-pass"}
	inRepoMember = Credentials{"tfacc-member", "tfacc-member-pass"}
)

// Env is one test's coordinator.
type Env struct {
	t        testing.TB
	Endpoint string
	Writer   Credentials
	Reader   Credentials
	Member   Credentials
	// Coordinator is the in-repo coordinator, or nil against a real one.
	Coordinator *coordinator.Coordinator
}

// Options tune the in-repo coordinator; a real coordinator ignores them.
type Options struct {
	// RateLimitPerWindow > 0 enables the admin mutation rate limit.
	RateLimitPerWindow int
	RateLimitWindow    time.Duration
	// RateLimitManualReset keeps rate-limit windows open until the test calls
	// Coordinator.ResetRateLimits, so a slow machine cannot let a window
	// lapse before the provider's request.
	RateLimitManualReset bool
	// MemberLeaseTTL defaults to 3 s so silent consumers expire quickly.
	MemberLeaseTTL time.Duration
	// RebalanceTimeout defaults to 5 s so members that never converge are
	// fenced quickly; a test whose silent member must stay live across
	// terraform runs sets it far beyond any machine's pace.
	RebalanceTimeout time.Duration
	// StreamProvisioning turns on the in-repo coordinator's Redis stream
	// provisioning (keys p:i, see Coordinator.RedisKeys).
	StreamProvisioning bool
	// EveryNewerCLI keeps the test in both passes of make test's newer-CLI
	// split (SplitNewerCLIs): for a test that checks what differs between
	// Terraform and OpenTofu.
	EveryNewerCLI bool
}

// IsReal reports whether tests run against a real coordinator.
func IsReal() bool { return os.Getenv(EnvEndpoint) != "" }

// ClearProviderEnv unsets the provider's own environment fallbacks, so a
// developer's exported REDIS_STREAM_COORDINATOR_* settings for a live system
// can never leak into a test. Call it from TestMain.
func ClearProviderEnv() {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "REDIS_STREAM_COORDINATOR_") {
			_ = os.Unsetenv(name)
		}
	}
}

// New returns the coordinator for one test: a fresh in-repo coordinator, or
// the configured real one. Under make test's newer-CLI split it skips a test
// the split gives to the other pass (SplitNewerCLIs).
func New(t testing.TB, opts Options) *Env {
	t.Helper()
	byHash := false
	if !opts.EveryNewerCLI {
		byHash = SplitNewerCLIs(t)
	}
	if IsReal() {
		return &Env{
			t:        t,
			Endpoint: os.Getenv(EnvEndpoint),
			Writer:   Credentials{os.Getenv(EnvWriteUsername), os.Getenv(EnvWritePassword)},
			Reader:   Credentials{os.Getenv(EnvReadUsername), os.Getenv(EnvReadPassword)},
			Member:   Credentials{os.Getenv(EnvMemberUsername), os.Getenv(EnvMemberPassword)},
		}
	}
	leaseTTL := opts.MemberLeaseTTL
	if leaseTTL == 0 {
		leaseTTL = 3 * time.Second
	}
	rebalance := opts.RebalanceTimeout
	if rebalance == 0 {
		rebalance = 5 * time.Second
	}
	var numbering coordinator.Numbering
	numberingName := os.Getenv(EnvNumbering)
	if splitDefaultNumbering(byHash) {
		// The newer-CLI split's second pass, for a test there other than by
		// its hash: the default numbering, as before the split (split.go).
		numberingName = ""
	}
	switch v := numberingName; v {
	case "":
	case "alternative":
		numbering = coordinator.AlternativeNumbering
	default:
		t.Fatalf("%s=%q: want \"alternative\" or unset", EnvNumbering, v)
	}
	c := coordinator.New(coordinator.Options{
		Numbering: numbering,
		Users: []coordinator.User{
			{Username: inRepoWriter.Username, Password: inRepoWriter.Password, Roles: []coordinator.Role{"WRITE"}},
			{Username: inRepoReader.Username, Password: inRepoReader.Password, Roles: []coordinator.Role{"READ"}},
			{Username: inRepoMember.Username, Password: inRepoMember.Password, Roles: []coordinator.Role{"MEMBER"}},
		},
		TokenSecret:          "tfacc-secret",
		RateLimitEnabled:     opts.RateLimitPerWindow > 0,
		RateLimitPerWindow:   opts.RateLimitPerWindow,
		RateLimitWindow:      opts.RateLimitWindow,
		RateLimitManualReset: opts.RateLimitManualReset,
		StreamProvisioning:   opts.StreamProvisioning,
		TickInterval:         50 * time.Millisecond,
		HeartbeatInterval:    100 * time.Millisecond,
		MemberLeaseTTL:       leaseTTL,
		RebalanceTimeout:     rebalance,
	})
	if err := c.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("start in-repo coordinator: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &Env{t: t, Endpoint: c.URL(), Writer: inRepoWriter, Reader: inRepoReader, Member: inRepoMember, Coordinator: c}
}

// RequireInRepo skips a test that needs the in-repo coordinator's fault hooks
// when running against a real coordinator, saying why.
func (e *Env) RequireInRepo(t testing.TB, why string) *coordinator.Coordinator {
	t.Helper()
	if e.Coordinator == nil {
		t.Skipf("needs the in-repo coordinator's test hooks (%s); skipped against the real coordinator at %s", why, e.Endpoint)
	}
	return e.Coordinator
}

// ProviderConfig is a provider block authenticating as the WRITE principal,
// plus any extra settings (HCL lines).
func (e *Env) ProviderConfig(extra ...string) string {
	return e.ProviderConfigAs(e.Writer, extra...)
}

// ProviderConfigAs is a provider block authenticating as creds.
func (e *Env) ProviderConfigAs(creds Credentials, extra ...string) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    redisstreamcoordinator = {
      source = %q
    }
  }
}

provider "redisstreamcoordinator" {
  endpoint       = %q
  username       = %q
  password       = %q
  retry_wait_min = "50ms"
  retry_wait_max = "500ms"
  %s
}
`, ProviderSource, e.Endpoint, creds.Username, creds.Password, strings.Join(extra, "\n  "))
}

// Client is an API client for the test itself (out-of-band changes, checks),
// authenticated as the WRITE principal.
func (e *Env) Client() *client.Client {
	e.t.Helper()
	c, err := client.New(client.Config{
		Endpoint: e.Endpoint, Username: e.Writer.Username, Password: e.Writer.Password,
		RequestedBy: "tfacc-out-of-band", RequestIDPrefix: "tfacc-oob", RunID: "tfacc", MaxRetries: 3,
		RetryWaitMin: 20 * time.Millisecond, RetryWaitMax: 200 * time.Millisecond, RequestTimeout: 10 * time.Second,
	})
	if err != nil {
		e.t.Fatalf("test client: %v", err)
	}
	return c
}

// RandomName is a name unique to this test run, so tests can share a real
// coordinator: "<base>-<8 random lowercase letters>" from
// terraform-plugin-testing's acctest.RandString (a valid stream prefix,
// consumer group or member id for any valid base). Not RandomWithPrefix:
// its suffix is a random int of 1 to 19 digits, so the width of the names,
// and with it where Terraform wraps the diagnostics that quote them, would
// change from run to run, and a test matching words across a wrap point
// would pass or fail by chance (it did: TestAccGroupShardCount_missingGroup).
func RandomName(base string) string {
	return base + "-" + sdkacctest.RandString(8)
}
