// Command terraform-provider-redisstreamcoordinator serves the Redis Stream
// Coordinator provider to Terraform over plugin protocol 6.
package main

import (
	"flag"
	"log"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/provider"
)

// version is set by the release build: -ldflags "-X main.version=<version>".
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	// provider.Serve is providerserver.Serve with each request's context
	// released when it returns (provider.NewProtocol6), after switching the
	// provider's and the SDK's logs off when no TF_LOG* variable could show
	// them (internal/logenv) and setting the garbage collector's defaults.
	if err := provider.Serve(version, debug); err != nil {
		log.Fatal(err.Error())
	}
}
