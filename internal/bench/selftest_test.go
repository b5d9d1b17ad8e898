package bench

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/bench/noop"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/bench/wrap"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/provider"
)

// selfTestEnv makes the test binary, started by Terraform under one of the
// benchmark's binary names, play that binary instead of running tests. The
// smoke test so needs no `go build`, whose CPU burst would otherwise land in
// the middle of every other package's acceptance tests in `make test`.
const selfTestEnv = "BENCH_SELF_TEST"

// TestMain prepares the environment as the provider's acceptance tests do
// (acctest.PrepareTerraform), except when the binary plays a provider: a
// provider needs the environment Terraform gave it.
func TestMain(m *testing.M) {
	if os.Getenv(selfTestEnv) == "1" {
		os.Exit(playBinary())
	}
	if err := acctest.PrepareTerraform(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// playBinary acts as the binary this executable was linked as: in real/ the
// provider or the do-nothing provider, elsewhere the RSS wrapper.
func playBinary() int {
	self, err := os.Executable()
	if err != nil {
		log.Print(err)
		return 1
	}
	if filepath.Base(filepath.Dir(self)) != "real" {
		return wrap.Run()
	}
	serve := func() error {
		return providerserver.Serve(context.Background(), provider.New("bench-smoke"),
			providerserver.ServeOpts{Address: provider.RegistryAddress, ProtocolVersion: 6})
	}
	if filepath.Base(self) == noopBinary {
		serve = func() error {
			return providerserver.Serve(context.Background(), noop.New, providerserver.ServeOpts{Address: noop.Address, ProtocolVersion: 6})
		}
	}
	if err := serve(); err != nil {
		log.Print(err)
		return 1
	}
	return 0
}

// selfBinaries lays the test binary out as Build lays out the real ones.
func selfBinaries(t *testing.T, dir string) Binaries {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b := Binaries{ProviderDir: filepath.Join(dir, "provider"), NoopDir: filepath.Join(dir, "noop")}
	for _, p := range []string{
		filepath.Join(dir, "real", demo.ProviderBinary), filepath.Join(dir, "real", noopBinary),
		filepath.Join(b.ProviderDir, demo.ProviderBinary), filepath.Join(b.NoopDir, noopBinary),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := linkOrCopy(self, p); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func linkOrCopy(from, to string) error {
	if os.Link(from, to) == nil {
		return nil
	}
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		_ = dst.Close()
		return err
	}
	return dst.Close()
}
