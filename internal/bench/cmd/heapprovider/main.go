// Command heapprovider serves the provider (or, named terraform-provider-noop,
// the do-nothing provider) like the real binary, and writes a heap profile
// to $BENCH_HEAP_DIR/<pid>.heap (and its goroutines to <pid>.heap.goroutines)
// every 2 s while it runs, so the memory a
// benchmark run measures can be explained with `go tool pprof`. To use it,
// build it over the real binary in a kept benchmark directory (-keep).
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/bench/noop"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/provider"
)

func main() {
	if dir := os.Getenv("BENCH_HEAP_DIR"); dir != "" {
		go func() {
			path := filepath.Join(dir, fmt.Sprintf("%d.heap", os.Getpid()))
			for range time.Tick(2 * time.Second) {
				if f, err := os.Create(path); err == nil {
					_ = pprof.Lookup("heap").WriteTo(f, 0)
					_ = f.Close()
				}
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				_ = os.WriteFile(path+".memstats", []byte(fmt.Sprintf("NumGC %d HeapAlloc %d MiB HeapInuse %d MiB HeapSys %d MiB NextGC %d MiB Sys %d MiB GOGC=%s GOMEMLIMIT=%s\n",
					m.NumGC, m.HeapAlloc>>20, m.HeapInuse>>20, m.HeapSys>>20, m.NextGC>>20, m.Sys>>20, os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT"))), 0o600)
				if f, err := os.Create(path + ".goroutines"); err == nil {
					_ = pprof.Lookup("goroutine").WriteTo(f, 1)
					_ = f.Close()
				}
			}
		}()
	}
	// The provider as main.go serves it; the do-nothing floor as the
	// framework's providerserver serves it.
	serve := func() error { return provider.Serve("heap", false) }
	if filepath.Base(os.Args[0]) == "terraform-provider-noop" {
		serve = func() error {
			return providerserver.Serve(context.Background(), noop.New, providerserver.ServeOpts{Address: noop.Address, ProtocolVersion: 6})
		}
	}
	if err := serve(); err != nil {
		log.Fatal(err)
	}
}
