package provider

import (
	"fmt"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// testAccProtoV6ProviderFactories serves the provider in-process to the
// terraform binary that terraform-plugin-testing drives.
var testAccProtoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	TypeName: providerserver.NewProtocol6WithError(New("test")()),
}

// providerFactoriesWithEnv serves a provider whose environment fallbacks
// come from env instead of the process environment (which parallel tests
// cannot change).
func providerFactoriesWithEnv(env map[string]string) map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		TypeName: providerserver.NewProtocol6WithError(&coordinatorProvider{version: "test", getenv: func(k string) string { return env[k] }}),
	}
}

func TestMain(m *testing.M) {
	if err := acctest.PrepareTerraform(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
