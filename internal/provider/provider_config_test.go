package provider

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

func nullModel() providerModel {
	return providerModel{
		Endpoint: types.StringNull(), Username: types.StringNull(), Password: types.StringNull(), Token: types.StringNull(),
		Login: types.BoolNull(), RequestedBy: types.StringNull(), RequestIDPrefix: types.StringNull(), RunID: types.StringNull(),
		DefaultReason: types.StringNull(), MaxRetries: types.Int64Null(), RetryWaitMin: types.StringNull(),
		RetryWaitMax: types.StringNull(), RequestTimeout: types.StringNull(), CACertPEM: types.StringNull(),
		InsecureSkipVerify: types.BoolNull(),
	}
}

func envOf(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func errorsOn(diags diag.Diagnostics) string {
	var parts []string
	for _, d := range diags.Errors() {
		parts = append(parts, d.Summary()+": "+d.Detail())
	}
	return strings.Join(parts, "\n")
}

func TestResolveConfig_EnvironmentFallbacksAndDefaults(t *testing.T) {
	cfg, diags := resolveConfig(nullModel(), envOf(map[string]string{
		"REDIS_STREAM_COORDINATOR_ENDPOINT":        "https://coord.example:8080",
		"REDIS_STREAM_COORDINATOR_USERNAME":        "ci-writer",
		"REDIS_STREAM_COORDINATOR_PASSWORD":        "s3cret",
		"REDIS_STREAM_COORDINATOR_LOGIN":           "true",
		"REDIS_STREAM_COORDINATOR_MAX_RETRIES":     "3",
		"REDIS_STREAM_COORDINATOR_RETRY_WAIT_MAX":  "5s",
		"REDIS_STREAM_COORDINATOR_REQUESTED_BY":    "terraform:prod",
		"REDIS_STREAM_COORDINATOR_RUN_ID":          "run-7",
		"REDIS_STREAM_COORDINATOR_REQUEST_TIMEOUT": "45s",
		"REDIS_STREAM_COORDINATOR_READ_TIMEOUT":    "2m",
	}))
	if diags.HasError() {
		t.Fatal(errorsOn(diags))
	}
	if cfg.Endpoint != "https://coord.example:8080" || cfg.Username != "ci-writer" || cfg.Password != "s3cret" || !cfg.Login ||
		cfg.MaxRetries != 3 || cfg.RetryWaitMax != 5*time.Second || cfg.RetryWaitMin != time.Second ||
		cfg.RequestTimeout != 45*time.Second || cfg.ReadTimeout != 2*time.Minute || cfg.RequestedBy != "terraform:prod" || cfg.RunID != "run-7" {
		t.Fatalf("resolved %+v", cfg)
	}
}

func TestResolveConfig_ConfigurationWinsOverEnvironment(t *testing.T) {
	m := nullModel()
	m.Endpoint = types.StringValue("http://127.0.0.1:9")
	m.MaxRetries = types.Int64Value(0)
	cfg, diags := resolveConfig(m, envOf(map[string]string{
		"REDIS_STREAM_COORDINATOR_ENDPOINT": "http://elsewhere:1", "REDIS_STREAM_COORDINATOR_MAX_RETRIES": "9",
		"REDIS_STREAM_COORDINATOR_TOKEN": "tok",
	}))
	if diags.HasError() || cfg.Endpoint != "http://127.0.0.1:9" || cfg.MaxRetries != 0 || cfg.Token != "tok" {
		t.Fatalf("cfg %+v diags %s", cfg, errorsOn(diags))
	}
}

func TestResolveConfig_CredentialsInConfigurationWinAsASet(t *testing.T) {
	env := envOf(map[string]string{
		"REDIS_STREAM_COORDINATOR_ENDPOINT": "http://x", "REDIS_STREAM_COORDINATOR_USERNAME": "env-user",
		"REDIS_STREAM_COORDINATOR_PASSWORD": "env-pass", "REDIS_STREAM_COORDINATOR_TOKEN": "env-token",
	})
	withToken := nullModel()
	withToken.Token = types.StringValue("config-token")
	cfg, diags := resolveConfig(withToken, env)
	if diags.HasError() || cfg.Token != "config-token" || cfg.Username != "" || cfg.Password != "" {
		t.Fatalf("a configured token must not be combined with environment credentials: %+v %s", cfg, errorsOn(diags))
	}
	withPassword := nullModel()
	withPassword.Username, withPassword.Password = types.StringValue("u"), types.StringValue("p")
	cfg, diags = resolveConfig(withPassword, env)
	if diags.HasError() || cfg.Token != "" || cfg.Username != "u" || cfg.Password != "p" {
		t.Fatalf("configured username/password must not be combined with an environment token: %+v %s", cfg, errorsOn(diags))
	}
}

func TestResolveConfig_ErrorsNameTheAttribute(t *testing.T) {
	cases := []struct {
		name string
		edit func(*providerModel)
		env  map[string]string
		want string
	}{
		{"missing endpoint", func(*providerModel) {}, nil, "Missing coordinator endpoint"},
		{"bad scheme", func(m *providerModel) { m.Endpoint = types.StringValue("ftp://x") }, nil, "must start with http:// or https://"},
		{"unknown endpoint", func(m *providerModel) { m.Endpoint = types.StringUnknown() }, nil, "only known after apply"},
		{"token and password from env", func(m *providerModel) { m.Endpoint = types.StringValue("http://x") },
			map[string]string{"REDIS_STREAM_COORDINATOR_TOKEN": "t", "REDIS_STREAM_COORDINATOR_USERNAME": "u", "REDIS_STREAM_COORDINATOR_PASSWORD": "p"}, "Conflicting credentials"},
		{"negative retries from env", func(m *providerModel) { m.Endpoint = types.StringValue("http://x") },
			map[string]string{"REDIS_STREAM_COORDINATOR_MAX_RETRIES": "-1"}, "0 or more"},
		{"bad duration from env", func(m *providerModel) { m.Endpoint = types.StringValue("http://x") },
			map[string]string{"REDIS_STREAM_COORDINATOR_RETRY_WAIT_MIN": "soon"}, "Go duration"},
		{"min above max", func(m *providerModel) {
			m.Endpoint, m.RetryWaitMin, m.RetryWaitMax = types.StringValue("http://x"), types.StringValue("10s"), types.StringValue("1s")
		}, nil, "longer than retry_wait_max"},
		{"login without password", func(m *providerModel) {
			m.Endpoint, m.Login, m.Username = types.StringValue("http://x"), types.BoolValue(true), types.StringValue("u")
		}, nil, "exchanges a username and password for a token, but no password is set"},
		{"ca and insecure", func(m *providerModel) {
			m.Endpoint, m.CACertPEM, m.InsecureSkipVerify = types.StringValue("https://x"), types.StringValue("pem"), types.BoolValue(true)
		}, nil, "cannot both be set"},
		{"bad run id", func(m *providerModel) {
			m.Endpoint, m.RunID = types.StringValue("http://x"), types.StringValue("run 1")
		}, nil, "letters, digits"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := nullModel()
			c.edit(&m)
			_, diags := resolveConfig(m, envOf(c.env))
			if !diags.HasError() || !strings.Contains(errorsOn(diags), c.want) {
				t.Fatalf("want an error containing %q, got %q", c.want, errorsOn(diags))
			}
		})
	}
}

func TestAccProvider_configurationErrorsThroughTerraform(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	group := groupHCL("test", "orders", "svc", "initial_shard_count = 1")
	providerBlock := func(body string) string {
		return `
terraform {
  required_providers {
    redisstreamcoordinator = { source = "` + acctest.ProviderSource + `" }
  }
}
provider "redisstreamcoordinator" {
` + body + `
}
`
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: providerBlock(`endpoint = "not a url"`) + group, PlanOnly: true, ExpectError: regexp.MustCompile(`Invalid coordinator endpoint`)},
			{Config: providerBlock(`endpoint = "http://127.0.0.1:1"
  username = "u"
  password = "p"
  token    = "t"`) + group, PlanOnly: true, ExpectError: regexp.MustCompile(`Conflicting credentials`)},
			{Config: providerBlock(`endpoint = "http://127.0.0.1:1"
  max_retries = -1`) + group, PlanOnly: true, ExpectError: regexp.MustCompile(`must be at least 0`)},
			{Config: providerBlock(`endpoint = "http://127.0.0.1:1"
  retry_wait_min = "fast"`) + group, PlanOnly: true, ExpectError: regexp.MustCompile(`Invalid duration`)},
			{Config: providerBlock(``) + group, PlanOnly: true, ExpectError: regexp.MustCompile(`Missing coordinator endpoint`)},
		},
	})
}

func TestAccProvider_environmentFallbacks(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	c := env.RequireInRepo(t, "counts login requests")
	p := acctest.RandomName("fromenv")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactoriesWithEnv(map[string]string{
			"REDIS_STREAM_COORDINATOR_ENDPOINT": env.Endpoint,
			"REDIS_STREAM_COORDINATOR_USERNAME": env.Writer.Username,
			"REDIS_STREAM_COORDINATOR_PASSWORD": env.Writer.Password,
			"REDIS_STREAM_COORDINATOR_LOGIN":    "true",
		}),
		Steps: []resource.TestStep{{
			Config: `
terraform {
  required_providers {
    redisstreamcoordinator = { source = "` + acctest.ProviderSource + `" }
  }
}
provider "redisstreamcoordinator" {}
` + groupHCL("test", p, "svc", "initial_shard_count = 2"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(groupAddr, tfjsonpath.New("shard_count"), knownvalue.Int64Exact(2)),
			},
		}},
	})
	// REDIS_STREAM_COORDINATOR_LOGIN=true took effect: Bearer tokens, not Basic.
	if c.RequestCount("POST", coordinator.RouteLogin) == 0 {
		t.Fatal("the LOGIN fallback was ignored: the provider never logged in")
	}
}

// credMix is one side's credentials in the mix table: the provider block's
// (nil = not written) or the environment's ("" = not exported).
type credMix struct {
	name                      string
	username, password, token *string
	login                     *bool
}

func strp(s string) *string { return &s }
func boolp(b bool) *bool    { return &b }

// The values are distinct per side, so the table can tell which side a
// resolved credential came from, and long enough that a diagnostic quoting
// one is caught.
const (
	blockUser, blockPass, blockToken = "block-user", "block-pass-S3CR3T", "block-token-S3CR3T"
	envUser, envPass, envToken       = "env-user", "env-pass-S3CR3T", "env-token-S3CR3T"
)

// credMixes are the mixes each side is tried with: none, every single
// setting, the working combinations, and every mix of token with another.
func credMixes(user, pass, token string) []credMix {
	u, p, t := strp(user), strp(pass), strp(token)
	on, off := boolp(true), boolp(false)
	return []credMix{
		{name: "none"},
		{name: "token", token: t},
		{name: "username+password", username: u, password: p},
		{name: "username+password+login", username: u, password: p, login: on},
		{name: "username", username: u},
		{name: "password", password: p},
		{name: "login", login: on},
		{name: "login=false", login: off},
		{name: "token+username", token: t, username: u},
		{name: "token+password", token: t, password: p},
		{name: "token+login", token: t, login: on},
		{name: "token+login=false", token: t, login: off},
		{name: "token+username+password", token: t, username: u, password: p},
		{name: "username+login", username: u, login: on},
	}
}

func (c credMix) model() providerModel {
	m := nullModel()
	m.Endpoint = types.StringValue("https://coord.example:8080")
	if c.username != nil {
		m.Username = types.StringValue(*c.username)
	}
	if c.password != nil {
		m.Password = types.StringValue(*c.password)
	}
	if c.token != nil {
		m.Token = types.StringValue(*c.token)
	}
	if c.login != nil {
		m.Login = types.BoolValue(*c.login)
	}
	return m
}

func (c credMix) env() map[string]string {
	env := map[string]string{}
	if c.username != nil {
		env[envName("username")] = *c.username
	}
	if c.password != nil {
		env[envName("password")] = *c.password
	}
	if c.token != nil {
		env[envName("token")] = *c.token
	}
	if c.login != nil {
		env[envName("login")] = strconv.FormatBool(*c.login)
	}
	return env
}

// wantByRule restates the rule of the provider page's Authentication
// section, independently of resolveCredentials: the credentials it picks,
// and the error (summary) or warning it expects.
func wantByRule(block, env credMix) (picked credMix, wantError, wantWarning string) {
	switch {
	case block.token != nil:
		// The block's token: the environment's credentials are all ignored.
		picked = block
	case block.username != nil || block.password != nil || block.login != nil:
		// The block's username/password/login, each completed from the
		// environment; the environment's token is ignored.
		picked = block
		if picked.username == nil {
			picked.username = env.username
		}
		if picked.password == nil {
			picked.password = env.password
		}
		if picked.login == nil {
			picked.login = env.login
		}
	default:
		picked = env
	}
	has := func(s *string) bool { return s != nil && *s != "" }
	login := picked.login != nil && *picked.login
	switch {
	case has(picked.token) && (has(picked.username) || has(picked.password) || login):
		return picked, "Conflicting credentials", ""
	case login && (!has(picked.username) || !has(picked.password)):
		return picked, "Missing credentials for login", ""
	case has(picked.password) && !has(picked.username):
		return picked, "Missing username", ""
	case has(picked.username) && !has(picked.password):
		return picked, "Missing password", ""
	case !has(picked.username) && !has(picked.token):
		return picked, "", "No coordinator credentials"
	}
	return picked, "", ""
}

// TestResolveConfig_everyCredentialMix tries every mix of provider block and
// environment credentials against the rule, and checks that no diagnostic
// repeats a password or token, or points at an attribute (Terraform would
// print the attribute's source line, which may hold the secret).
func TestResolveConfig_everyCredentialMix(t *testing.T) {
	secrets := []string{blockPass, blockToken, envPass, envToken}
	for _, block := range credMixes(blockUser, blockPass, blockToken) {
		for _, env := range credMixes(envUser, envPass, envToken) {
			t.Run("block "+block.name+", env "+env.name, func(t *testing.T) {
				picked, wantError, wantWarning := wantByRule(block, env)
				cfg, diags := resolveConfig(block.model(), envOf(env.env()))
				var summaries []string
				for _, d := range diags {
					summaries = append(summaries, d.Summary())
					for _, secret := range secrets {
						if strings.Contains(d.Summary()+d.Detail(), secret) {
							t.Errorf("diagnostic %q repeats %q: %s", d.Summary(), secret, d.Detail())
						}
					}
					if wp, ok := d.(diag.DiagnosticWithPath); ok && wp.Path().String() != "" && wp.Path().String() != "endpoint" {
						t.Errorf("diagnostic %q points at %s", d.Summary(), wp.Path())
					}
				}
				got := strings.Join(summaries, "; ")
				if wantError != "" {
					if len(diags.Errors()) != 1 || diags.Errors()[0].Summary() != wantError {
						t.Fatalf("want exactly the error %q, got %q", wantError, got)
					}
					return
				}
				if diags.HasError() {
					t.Fatalf("want no error, got %q: %s", got, errorsOn(diags))
				}
				if wantWarning != "" && !strings.Contains(got, wantWarning) || wantWarning == "" && len(diags) > 0 {
					t.Fatalf("want the warning %q, got %q", wantWarning, got)
				}
				deref := func(s *string) string {
					if s == nil {
						return ""
					}
					return *s
				}
				wantLogin := picked.login != nil && *picked.login
				if cfg.Username != deref(picked.username) || cfg.Password != deref(picked.password) ||
					cfg.Token != deref(picked.token) || cfg.Login != wantLogin {
					t.Fatalf("resolved username %q password set %v token %q login %v; want username %q password %q token %q login %v",
						cfg.Username, cfg.Password != "", cfg.Token, cfg.Login,
						deref(picked.username), deref(picked.password), deref(picked.token), wantLogin)
				}
			})
		}
	}
}

// The cases of issue 29, spelled out: what each mix does and what its
// message says, independently of the table's restatement of the rule.
func TestResolveConfig_credentialRuleCases(t *testing.T) {
	cases := []struct {
		name      string
		block     credMix
		env       map[string]string
		wantAuth  string // authMode, when there is no error
		wantError []string
	}{
		{name: "an aliased token provider ignores an exported LOGIN",
			block: credMix{token: strp(blockToken)},
			env:   map[string]string{envName("login"): "true"}, wantAuth: "bearer"},
		{name: "... and exported username, password and token",
			block: credMix{token: strp(blockToken)},
			env: map[string]string{envName("login"): "true", envName("username"): envUser, envName("password"): envPass,
				envName("token"): envToken}, wantAuth: "bearer"},
		{name: "token and username in the block conflict, whatever the environment",
			block:     credMix{token: strp(blockToken), username: strp(blockUser)},
			wantError: []string{"Conflicting credentials", "The provider block sets both token and `username`"}},
		{name: "... also with a password exported",
			block:     credMix{token: strp(blockToken), username: strp(blockUser)},
			env:       map[string]string{envName("password"): envPass},
			wantError: []string{"Conflicting credentials", "The provider block sets both token and `username`."}},
		{name: "token and username in the environment conflict",
			env:       map[string]string{envName("token"): envToken, envName("username"): envUser},
			wantError: []string{"Conflicting credentials", "The environment sets both REDIS_STREAM_COORDINATOR_TOKEN and REDIS_STREAM_COORDINATOR_USERNAME,"}},
		{name: "token and login in the environment conflict",
			env:       map[string]string{envName("token"): envToken, envName("login"): "true"},
			wantError: []string{"Conflicting credentials", "REDIS_STREAM_COORDINATOR_TOKEN and REDIS_STREAM_COORDINATOR_LOGIN=true"}},
		{name: "a username in the block takes the exported password",
			block: credMix{username: strp(blockUser)},
			env:   map[string]string{envName("password"): envPass}, wantAuth: "basic"},
		{name: "a username in the block with only a token exported lacks a password, and says the token is ignored",
			block:     credMix{username: strp(blockUser)},
			env:       map[string]string{envName("token"): envToken},
			wantError: []string{"Missing password", "`username` in the provider block", "REDIS_STREAM_COORDINATOR_TOKEN is ignored"}},
		{name: "login in the block takes the exported username and password",
			block: credMix{login: boolp(true)},
			env:   map[string]string{envName("username"): envUser, envName("password"): envPass}, wantAuth: "login"},
		{name: "login in the block ignores an exported token",
			block:     credMix{login: boolp(true)},
			env:       map[string]string{envName("token"): envToken},
			wantError: []string{"Missing credentials for login", "neither is set", "REDIS_STREAM_COORDINATOR_TOKEN is ignored"}},
		{name: "username and password in the block ignore an exported token and LOGIN is still read",
			block: credMix{username: strp(blockUser), password: strp(blockPass)},
			env:   map[string]string{envName("token"): envToken, envName("login"): "true"}, wantAuth: "login"},
		{name: "an ignored LOGIN is not parsed",
			block: credMix{token: strp(blockToken)},
			env:   map[string]string{envName("login"): "yes"}, wantAuth: "bearer"},
		{name: "a used LOGIN must be a boolean",
			env:       map[string]string{envName("username"): envUser, envName("password"): envPass, envName("login"): "yes"},
			wantError: []string{"Invalid login", `REDIS_STREAM_COORDINATOR_LOGIN="yes" is not a boolean`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, diags := resolveConfig(c.block.model(), envOf(c.env))
			msg := errorsOn(diags)
			for _, secret := range []string{blockPass, blockToken, envPass, envToken} {
				if strings.Contains(msg, secret) {
					t.Errorf("the error repeats a secret: %s", msg)
				}
			}
			if c.wantError == nil {
				if diags.HasError() {
					t.Fatal(msg)
				}
				if got := authMode(cfg); got != c.wantAuth {
					t.Fatalf("auth %q, want %q", got, c.wantAuth)
				}
				return
			}
			for _, want := range c.wantError {
				if !strings.Contains(msg, want) {
					t.Errorf("the error lacks %q: %s", want, msg)
				}
			}
		})
	}
}

// An endpoint with user info is refused wherever it comes from, and no
// diagnostic repeats the user info.
func TestResolveConfig_endpointUserInfo(t *testing.T) {
	for _, endpoint := range []string{
		"https://tfuser:s3cr3t@127.0.0.1:1", "https://tfuser@127.0.0.1:1", "https://tfuser:s3/cr3t@127.0.0.1:1",
		"https://tfuser:s3cr3t@127.0.0.1:port", "tfuser:s3cr3t@127.0.0.1:1",
	} {
		for _, fromEnv := range []bool{false, true} {
			m, env := nullModel(), map[string]string{envName("token"): "tok"}
			if fromEnv {
				env[envName("endpoint")] = endpoint
			} else {
				m.Endpoint = types.StringValue(endpoint)
			}
			_, diags := resolveConfig(m, envOf(env))
			msg := errorsOn(diags)
			if !strings.Contains(msg, "contains user info; put credentials in username/password or token") {
				t.Errorf("%q (env %v): %s", endpoint, fromEnv, msg)
			}
			if fromEnv && !strings.Contains(msg, "REDIS_STREAM_COORDINATOR_ENDPOINT") {
				t.Errorf("%q: the error does not say the endpoint came from the environment: %s", endpoint, msg)
			}
			for _, secret := range []string{"s3", "cr3t", "tfuser"} {
				if strings.Contains(msg, secret) {
					t.Errorf("%q (env %v): the error repeats %q: %s", endpoint, fromEnv, secret, msg)
				}
			}
			for _, d := range diags.Errors() {
				if wp, ok := d.(diag.DiagnosticWithPath); ok && wp.Path().String() != "" {
					t.Errorf("%q: the error points at %s, whose source line Terraform would print", endpoint, wp.Path())
				}
			}
		}
		var resp validator.StringResponse
		endpointValidator{}.ValidateString(context.Background(), validator.StringRequest{
			Path: path.Root("endpoint"), ConfigValue: types.StringValue(endpoint),
		}, &resp)
		if msg := errorsOn(resp.Diagnostics); !strings.Contains(msg, "contains user info") || strings.Contains(msg, "s3") {
			t.Errorf("validator, %q: %s", endpoint, msg)
		}
	}
}
