package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/echoprovider"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// tokenFactories add the echo provider, which copies ephemeral values into
// test state so they can be asserted.
func tokenFactories() map[string]func() (tfprotov6.ProviderServer, error) {
	f := map[string]func() (tfprotov6.ProviderServer, error){"echo": echoprovider.NewProviderServer()}
	for k, v := range testAccProtoV6ProviderFactories {
		f[k] = v
	}
	return f
}

// providerConfigWithEcho is the WRITE principal's provider block plus the
// echo provider's requirement: a module has one required_providers block,
// so the harness's own configuration cannot be extended. Both providers are
// served under the test namespace.
func providerConfigWithEcho(env *acctest.Env) string {
	return fmt.Sprintf(`
terraform {
  required_providers {
    redisstreamcoordinator = {
      source = %q
    }
    echo = {
      source = "%s/echo"
    }
  }
}

provider "redisstreamcoordinator" {
  endpoint = %q
  username = %q
  password = %q
}
`, acctest.ProviderSource, acctest.ProviderNamespace, env.Endpoint, env.Writer.Username, env.Writer.Password)
}

var tokenShape = regexp.MustCompile(`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$`)

func TestAccTokenEphemeralResource(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	p, g := acctest.RandomName("orders"), acctest.RandomName("svc")
	dsCreateGroup(t, env, p, g, 3)

	token := func(roles ...string) knownvalue.Check {
		list := make([]knownvalue.Check, 0, len(roles))
		for _, r := range roles {
			list = append(list, knownvalue.StringExact(r))
		}
		checks := map[string]knownvalue.Check{
			"token":      knownvalue.StringRegexp(tokenShape),
			"token_type": knownvalue.StringExact("Bearer"),
			"expires_at": knownvalue.StringRegexp(dsRFC3339),
			"roles":      knownvalue.ListExact(list),
		}
		if env.Coordinator != nil {
			checks["expires_in_seconds"] = knownvalue.Int64Exact(7 * 24 * 3600) // the default TTL
		}
		return knownvalue.ObjectPartial(checks)
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_10_0)},
		ProtoV6ProviderFactories: tokenFactories(),
		Steps: []resource.TestStep{{
			Config: providerConfigWithEcho(env) + fmt.Sprintf(`
# The provider's own credentials (the WRITE principal).
ephemeral "redisstreamcoordinator_token" "writer" {}

# Another principal's.
ephemeral "redisstreamcoordinator_token" "reader" {
  username = %[2]q
  password = %[3]q
}

provider "echo" {
  data = {
    writer = ephemeral.redisstreamcoordinator_token.writer
    reader = ephemeral.redisstreamcoordinator_token.reader
  }
}

resource "echo" "tokens" {}

# The reader's token authenticates a second provider instance. Its
# requested_by refers to the writer's token only to order it after the
# writer's: the test harness serves both provider configurations from one
# in-process server, where the configuration done last is the one every
# call uses (Terraform runs one plugin process per configuration), so the
# writer's login must not come after this instance is configured.
provider "redisstreamcoordinator" {
  alias        = "reader_token"
  endpoint     = %[1]q
  token        = ephemeral.redisstreamcoordinator_token.reader.token
  requested_by = "tfacc-${ephemeral.redisstreamcoordinator_token.writer.token_type}"
}

data "redisstreamcoordinator_group" "via_token" {
  provider       = redisstreamcoordinator.reader_token
  stream_prefix  = %[4]q
  consumer_group = %[5]q
}
`, env.Endpoint, env.Reader.Username, env.Reader.Password, p, g),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("echo.tokens", tfjsonpath.New("data").AtMapKey("writer"), token("WRITE")),
				statecheck.ExpectKnownValue("echo.tokens", tfjsonpath.New("data").AtMapKey("reader"), token("READ")),
				statecheck.ExpectKnownValue("echo.tokens", tfjsonpath.New("data").AtMapKey("reader").AtMapKey("username"),
					knownvalue.StringExact(env.Reader.Username)),
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.via_token", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(3)),
			},
		}},
	})
}

func TestAccTokenEphemeralResource_badCredentials(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_10_0)},
		ProtoV6ProviderFactories: tokenFactories(),
		Steps: []resource.TestStep{{
			Config: providerConfigWithEcho(env) + fmt.Sprintf(`
ephemeral "redisstreamcoordinator_token" "bad" {
  username = %q
  password = "not-the-password"
}

provider "echo" {
  data = ephemeral.redisstreamcoordinator_token.bad
}

resource "echo" "token" {}
`, env.Writer.Username),
			ExpectError: wrappedText(fmt.Sprintf(`Coordinator login as %q failed`, env.Writer.Username)),
		}, {
			Config: providerConfigWithEcho(env) + `
ephemeral "redisstreamcoordinator_token" "bad" {
  username = "nobody"
  password = "not-the-password"
}

provider "echo" {
  data = ephemeral.redisstreamcoordinator_token.bad
}

resource "echo" "token" {}
`,
			ExpectError: wrappedText(`The coordinator answered 401`),
		}, {
			// A username without a password is caught before any call.
			Config: providerConfigWithEcho(env) + `
ephemeral "redisstreamcoordinator_token" "half" {
  username = "nobody"
}

provider "echo" {
  data = ephemeral.redisstreamcoordinator_token.half
}

resource "echo" "token" {}
`,
			ExpectError: wrappedText(`Attribute "password" must be specified when "username" is specified`),
		}},
	})
}

// The documented example: a provider instance configured with nothing but
// the token reads through it.
func TestAccTokenEphemeralResource_example(t *testing.T) {
	env := acctest.New(t, acctest.Options{})
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks: []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_10_0)},
		Steps: []resource.TestStep{{
			ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
			ConfigFile:               config.StaticFile("../../examples/ephemeral-resources/redisstreamcoordinator_token/ephemeral-resource.tf"),
			ConfigVariables: config.Variables{
				"coordinator_endpoint": config.StringVariable(env.Endpoint),
				"ci_username":          config.StringVariable(env.Writer.Username),
				"ci_password":          config.StringVariable(env.Writer.Password),
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.redisstreamcoordinator_health.via_token", tfjsonpath.New("status"), knownvalue.StringExact("UP")),
			},
		}},
	})
}
