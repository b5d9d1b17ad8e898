// Command terraform-provider-redisstreamcoordinator serves the Redis Stream
// Coordinator provider to Terraform over plugin protocol 6.
package main

import (
	"flag"
	"log"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/logenv"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/provider"
)

// version is set by the release build: -ldflags "-X main.version=<version>".
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	// Quiet by default: with no TF_LOG* variable that could show them,
	// nothing displays the provider's logs, so the SDK and provider loggers
	// are switched off instead of encoding every TRACE line for Terraform
	// to discard. In debug mode the logs go to the developer's terminal and
	// stay on.
	if !debug {
		if _, err := logenv.Apply(); err != nil {
			log.Fatal(err.Error())
		}
	}

	// provider.Serve is providerserver.Serve with each request's context
	// released when it returns (see provider.NewProtocol6).
	if err := provider.Serve(version, debug); err != nil {
		log.Fatal(err.Error())
	}
}
