// Command terraform-provider-redisstreamcoordinator serves the Redis Stream
// Coordinator provider to Terraform over plugin protocol 6.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/provider"
)

// version is set by the release build: -ldflags "-X main.version=<version>".
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address:         provider.RegistryAddress,
		Debug:           debug,
		ProtocolVersion: 6,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
