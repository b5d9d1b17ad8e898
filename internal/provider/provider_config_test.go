package provider

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
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
	}))
	if diags.HasError() {
		t.Fatal(errorsOn(diags))
	}
	if cfg.Endpoint != "https://coord.example:8080" || cfg.Username != "ci-writer" || cfg.Password != "s3cret" || !cfg.Login ||
		cfg.MaxRetries != 3 || cfg.RetryWaitMax != 5*time.Second || cfg.RetryWaitMin != time.Second ||
		cfg.RequestTimeout != 45*time.Second || cfg.RequestedBy != "terraform:prod" || cfg.RunID != "run-7" {
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
		}, nil, "needs both username and password"},
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
  token    = "t"`) + group, PlanOnly: true, ExpectError: regexp.MustCompile(`Invalid Attribute Combination`)},
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
