package provider

import (
	"fmt"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// testAccProtoV6ProviderFactories serves the provider in-process to the
// terraform binary that terraform-plugin-testing drives.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	TypeName: withError(NewProtocol6(newTestProvider())),
}

// providerFactoriesWithEnv serves a provider whose environment fallbacks
// come from env instead of the process environment (which parallel tests
// cannot change).
func providerFactoriesWithEnv(env map[string]string) map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		TypeName: withError(NewProtocol6(&coordinatorProvider{version: "test", getenv: func(k string) string { return env[k] }})),
	}
}

// withError adapts a server factory to ProtoV6ProviderFactories.
func withError(f func() tfprotov6.ProviderServer) func() (tfprotov6.ProviderServer, error) {
	return func() (tfprotov6.ProviderServer, error) { return f(), nil }
}

func TestMain(m *testing.M) {
	if err := acctest.PrepareTerraform(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
