package provider

import (
	"context"
	"fmt"
	"os"
	runtimedebug "runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/logenv"
)

// Serve serves the provider over plugin protocol 6 with quiet logs unless asked
// for and the GC settings of gcDefaults.
func Serve(version string, debug bool) error {
	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	} else if _, err := logenv.Apply(); err != nil {
		return err
	}
	if percent, limit, ok := gcDefaults(os.Environ()); ok {
		runtimedebug.SetGCPercent(percent)
		runtimedebug.SetMemoryLimit(limit)
	}
	return tf6server.Serve(RegistryAddress, func() tfprotov6.ProviderServer {
		return NewProtocol6(New(version)())()
	}, opts...)
}

// gcDefaults applies GOGC=400 and a 96 MiB soft limit when the user set
// neither: a plan allocates many short-lived objects while the live heap stays
// small, and at GOGC=100 the collector took ~40% of processor time.
func gcDefaults(environ []string) (percent int, limit int64, ok bool) {
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if (name == "GOGC" || name == "GOMEMLIMIT") && value != "" {
			return 0, 0, false
		}
	}
	return 400, 96 << 20, true
}

// NewProtocol6 is providerserver.NewProtocol6 with each RPC's context released
// when the RPC returns: the framework keeps every RPC's context until
// StopProvider (about 16 KiB each, over a GiB for 10,000 resources).
func NewProtocol6(p provider.Provider) func() tfprotov6.ProviderServer {
	inner := providerserver.NewProtocol6(p)
	return func() tfprotov6.ProviderServer { return newReleasingServer(inner()) }
}

// frameworkServer: terraform-plugin-go keeps list resource, action and state
// store RPCs out of tfprotov6.ProviderServer.
type frameworkServer interface {
	tfprotov6.ProviderServer
	tfprotov6.ListResourceServer
	tfprotov6.ActionServer
	tfprotov6.StateStoreServer
}

var _ frameworkServer = (*releasingServer)(nil)

func newReleasingServer(inner tfprotov6.ProviderServer) *releasingServer {
	fw, ok := inner.(frameworkServer)
	if !ok {
		panic(fmt.Sprintf("%T does not serve list resources, actions and state stores; this is a bug in the provider", inner))
	}
	return &releasingServer{framework: fw}
}

// releasingServer also orders ConfigureProvider (the write side of configure) against
// other RPCs: the framework writes configure data without a lock, and in-process
// test runs configure again while RPCs are running.
type releasingServer struct {
	framework frameworkServer
	configure sync.RWMutex
}

func call[Req, Resp any](ctx context.Context, s *releasingServer, fn func(context.Context, Req) (Resp, error), req Req) (Resp, error) {
	s.configure.RLock()
	defer s.configure.RUnlock()
	rc := newReleasableContext(ctx)
	defer rc.release()
	return fn(rc, req)
}

// releasableContext forwards to its parent until release, then to a canceled
// context that references nothing.
type releasableContext struct {
	parent atomic.Pointer[context.Context]
}

func newReleasableContext(ctx context.Context) *releasableContext {
	rc := &releasableContext{}
	rc.parent.Store(&ctx)
	return rc
}

func (c *releasableContext) release() { c.parent.Store(nil) }

func (c *releasableContext) current() context.Context {
	if p := c.parent.Load(); p != nil {
		return *p
	}
	released, cancel := context.WithCancel(context.Background())
	cancel()
	return released
}

func (c *releasableContext) Deadline() (time.Time, bool) { return c.current().Deadline() }
func (c *releasableContext) Done() <-chan struct{}       { return c.current().Done() }
func (c *releasableContext) Err() error                  { return c.current().Err() }
func (c *releasableContext) Value(key any) any           { return c.current().Value(key) }
