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

// Serve serves the provider to Terraform over plugin protocol 6, as
// providerserver.Serve does, through NewProtocol6, after setting up the
// process: quiet logs unless the user asked for them (logenv; in debug mode
// the logs go to the developer's terminal and stay on) and the garbage
// collector settings of gcDefaults. main.go and the benchmark's profiling
// build (internal/bench/cmd/heapprovider) both serve through it.
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

// gcDefaults returns the garbage collector settings the provider runs with
// when the user has set neither GOGC nor GOMEMLIMIT: collect at 5× the live
// heap instead of 2× (GOGC=400), and more often again as the process nears
// 96 MiB (a soft limit, so a workspace whose live heap needs more still
// works, with more collections).
//
// Why: a plan makes two to four small RPCs per resource, each allocating
// short-lived objects in the plugin framework, while the live heap stays
// small (tens of MiB at 10,000 resources). At the default GOGC=100 the
// collector ran every few MiB of allocation and took about 40% of the
// provider's processor time in a plan of 2,000 resources; at 400 the
// provider used 41% less processor time (11.7 s → 6.9 s) and peaked at
// 63 MiB instead of 35 MiB (BENCHMARKS.md).
func gcDefaults(environ []string) (percent int, limit int64, ok bool) {
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if (name == "GOGC" || name == "GOMEMLIMIT") && value != "" {
			return 0, 0, false
		}
	}
	return 400, 96 << 20, true
}

// NewProtocol6 is providerserver.NewProtocol6 with each RPC's context
// released when the RPC returns.
//
// Why: terraform-plugin-framework (v1.19) derives a cancelable context from
// every RPC's context and appends its cancel function to a slice that only
// StopProvider empties (proto6server.Server.registerContext), so a provider
// process keeps every request's whole context alive until it exits: the
// request's loggers and their options, the gRPC stream and the context
// chain, about 16 KiB per RPC. Terraform makes two to three RPCs per
// resource in a plan, so a plan of 10,000 resources kept over a GiB. Here
// the framework gets a small context that forwards to the RPC's context
// while the RPC runs and is cut from it when the RPC returns, so the
// framework's slice only keeps that small shell (a few hundred bytes).
//
// Every RPC the framework serves is forwarded by a method of its own
// (server_rpcs.go): releasingServer holds the framework's server in a named
// field, not an embedded interface, so an RPC a terraform-plugin-go release
// adds cannot reach the framework around the wrapper unnoticed.
// TestReleasingServerForwardsEveryRPC fails on a framework method the
// wrapper lacks, and TestReleasingServerReleasesEveryRPC on one that keeps
// its context.
func NewProtocol6(p provider.Provider) func() tfprotov6.ProviderServer {
	inner := providerserver.NewProtocol6(p)
	return func() tfprotov6.ProviderServer { return newReleasingServer(inner()) }
}

// frameworkServer is every RPC the framework's server serves:
// terraform-plugin-go v0.31 keeps the list resource, action and state store
// RPCs out of tfprotov6.ProviderServer (temporary interfaces), and tf6server
// serves them only when the server implements them.
type frameworkServer interface {
	tfprotov6.ProviderServer
	tfprotov6.ListResourceServer
	tfprotov6.ActionServer
	tfprotov6.StateStoreServer
}

// So tf6server finds the list resource, action and state store RPCs on it.
var _ frameworkServer = (*releasingServer)(nil)

func newReleasingServer(inner tfprotov6.ProviderServer) *releasingServer {
	fw, ok := inner.(frameworkServer)
	if !ok {
		// The framework has served every one of these since v1.16; a
		// version that does not is one this provider was never built with.
		panic(fmt.Sprintf("%T does not serve list resources, actions and state stores; this is a bug in the provider", inner))
	}
	return &releasingServer{framework: fw}
}

// releasingServer hands each RPC a releasableContext.
//
// It also orders ConfigureProvider against the other RPCs of the same
// server: the framework's ConfigureProvider writes the data it hands to
// resources, data sources and ephemeral resources (fwserver.Server's
// *ConfigureData fields) without a lock, and those RPCs read them. A real
// Terraform run configures a provider process once, before anything else;
// a provider served in-process to the acceptance tests is configured again
// by each Terraform command, and the race detector saw a configure racing
// with the previous command's CloseEphemeralResource. Each RPC holds the
// read side while it runs; ConfigureProvider takes the write side.
// StopProvider takes neither, so it can still cancel RPCs in flight.
type releasingServer struct {
	framework frameworkServer
	configure sync.RWMutex
}

// call runs fn with a context that forwards to ctx until fn returns.
func call[Req, Resp any](ctx context.Context, s *releasingServer, fn func(context.Context, Req) (Resp, error), req Req) (Resp, error) {
	s.configure.RLock()
	defer s.configure.RUnlock()
	rc := newReleasableContext(ctx)
	defer rc.release()
	return fn(rc, req)
}

// releasableContext forwards to its parent until release; after that it is
// a canceled context with no values, and no longer references the parent.
// While it forwards, a context derived from it with context.WithCancel
// finds the parent's cancelCtx through Value and registers there, as it
// would on the parent itself, so no goroutine is started for it.
type releasableContext struct {
	parent atomic.Pointer[parentContext]
}

type parentContext struct{ ctx context.Context }

func newReleasableContext(ctx context.Context) *releasableContext {
	rc := &releasableContext{}
	rc.parent.Store(&parentContext{ctx: ctx})
	return rc
}

func (c *releasableContext) release() { c.parent.Store(nil) }

var closedDone = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

func (c *releasableContext) Deadline() (time.Time, bool) {
	if p := c.parent.Load(); p != nil {
		return p.ctx.Deadline()
	}
	return time.Time{}, false
}

func (c *releasableContext) Done() <-chan struct{} {
	if p := c.parent.Load(); p != nil {
		return p.ctx.Done()
	}
	return closedDone
}

func (c *releasableContext) Err() error {
	if p := c.parent.Load(); p != nil {
		return p.ctx.Err()
	}
	return context.Canceled
}

func (c *releasableContext) Value(key any) any {
	if p := c.parent.Load(); p != nil {
		return p.ctx.Value(key)
	}
	return nil
}
