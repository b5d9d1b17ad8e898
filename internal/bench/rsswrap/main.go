// Command rsswrap is the benchmark's RSS-measuring stand-in for a provider
// binary (package wrap).
package main

import (
	"os"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/bench/wrap"
)

func main() { os.Exit(wrap.Run()) }
