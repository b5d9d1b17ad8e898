// Command heapprovider serves the provider (or, named terraform-provider-noop,
// the do-nothing provider) like the real binary does, quiet logs and garbage
// collector settings included, and profiles it so that what a benchmark run
// measures can be explained with `go tool pprof`:
//
//   - with $BENCH_HEAP_DIR, a heap profile to <dir>/<pid>.heap (its
//     goroutines to <pid>.heap.goroutines, memory statistics to
//     <pid>.heap.memstats) every 2 s;
//   - with $BENCH_CPU_DIR, a CPU profile in 1 s pieces <dir>/<pid>.cpu.<n>
//     (Terraform kills the process without warning, so the piece running
//     then is lost): `go tool pprof -top <binary> <dir>/*.cpu.*` merges them.
//
// To use it, copy it over real/terraform-provider-redisstreamcoordinator of a
// benchmark directory (-keep) right after the benchmark has built it, with
// the variables set in the benchmark's environment (BENCHMARKS.md,
// "Profiling").
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
	if dir := os.Getenv("BENCH_CPU_DIR"); dir != "" {
		go func() {
			for n := 0; ; n++ {
				f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.cpu.%d", os.Getpid(), n)))
				if err != nil || pprof.StartCPUProfile(f) != nil {
					return
				}
				time.Sleep(time.Second)
				pprof.StopCPUProfile()
				_ = f.Close()
			}
		}()
	}
	// The provider as main.go serves it (provider.Serve: quiet logs and
	// its garbage collector settings included); the do-nothing floor as
	// the framework's providerserver serves it.
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
