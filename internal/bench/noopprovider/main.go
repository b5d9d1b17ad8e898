// Command noopprovider serves the benchmark's do-nothing provider (package
// noop) to Terraform.
package main

import (
	"context"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/bench/noop"
)

func main() {
	err := providerserver.Serve(context.Background(), noop.New, providerserver.ServeOpts{Address: noop.Address, ProtocolVersion: 6})
	if err != nil {
		log.Fatal(err)
	}
}
