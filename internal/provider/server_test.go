package provider

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/logenv"
)

type ctxKey struct{}

// payload stands for what a request's context carries (loggers, the gRPC
// stream); the test watches whether it outlives the request.
type payload struct{ _ [16 << 10]byte }

// oneRequest serves one ValidateResourceConfig whose context carries a
// payload, cancels that context when the call returns (as gRPC does), and
// returns a channel closed when the payload is garbage collected.
func oneRequest(t *testing.T, s tfprotov6.ProviderServer) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &payload{}
	done := make(chan struct{})
	runtime.AddCleanup(p, func(ch chan struct{}) { close(ch) }, done)
	req := &tfprotov6.ValidateResourceConfigRequest{TypeName: TypeName + "_group"}
	if _, err := s.ValidateResourceConfig(context.WithValue(ctx, ctxKey{}, p), req); err != nil {
		t.Fatal(err)
	}
	return done
}

// freed collects garbage until done is closed, or gives up after a bound
// that only a retained payload reaches (it is not a timing assertion).
func freed(done <-chan struct{}, bound time.Duration) bool {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		runtime.GC()
		select {
		case <-done:
			return true
		case <-time.After(10 * time.Millisecond):
		}
	}
	return false
}

// TestNewProtocol6ReleasesRequestContexts: once an RPC has returned and
// its context is canceled (as gRPC does), nothing the provider server keeps
// references that context. The framework's own server keeps it until
// StopProvider (the control below): a plan of N resources would hold N
// requests' loggers and streams.
func TestNewProtocol6ReleasesRequestContexts(t *testing.T) {
	t.Run("framework server keeps it (control)", func(t *testing.T) {
		s := providerserver.NewProtocol6(New("test")())()
		if freed(oneRequest(t, s), 200*time.Millisecond) {
			t.Skip("the framework no longer keeps request contexts; NewProtocol6's wrapper can go (see server.go)")
		}
		runtime.KeepAlive(s)
	})
	t.Run("NewProtocol6 releases it", func(t *testing.T) {
		s := NewProtocol6(New("test")())()
		if !freed(oneRequest(t, s), 30*time.Second) {
			t.Fatal("the request's context is still referenced after the RPC returned")
		}
		runtime.KeepAlive(s)
	})
}

func TestReleasableContext(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	defer cancel()
	rc := newReleasableContext(parent)
	if rc.Value(ctxKey{}) != "v" || rc.Err() != nil || rc.Done() != parent.Done() {
		t.Fatal("while the RPC runs the context must forward to its parent")
	}
	// A context derived from it is canceled with the parent, as the
	// framework's derived context must be when Terraform stops a request.
	child, childCancel := context.WithCancel(rc)
	defer childCancel()
	cancel()
	select {
	case <-child.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a context derived from it was not canceled with the parent")
	}

	rc.release()
	if rc.Value(ctxKey{}) != nil {
		t.Error("a released context must carry no values")
	}
	if !errors.Is(rc.Err(), context.Canceled) {
		t.Errorf("a released context must be canceled, Err = %v", rc.Err())
	}
	select {
	case <-rc.Done():
	default:
		t.Error("a released context's Done channel must be closed")
	}
	if _, ok := rc.Deadline(); ok {
		t.Error("a released context has no deadline")
	}
}

// nullConfig is a configuration of schema s with every attribute null.
func nullConfig(t *testing.T, s *tfprotov6.Schema) *tfprotov6.DynamicValue {
	t.Helper()
	typ := s.ValueType().(tftypes.Object)
	vals := make(map[string]tftypes.Value, len(typ.AttributeTypes))
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, vals))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// TestNewProtocol6OrdersConfigureProvider: a ConfigureProvider (which the
// framework lets write the data resources read, without a lock) and
// resource RPCs run concurrently on one server, as they do when Terraform
// commands follow each other against a provider served in-process. Under
// the race detector (make test runs with -race) the framework's own server
// fails this test; NewProtocol6's must not.
func TestNewProtocol6OrdersConfigureProvider(t *testing.T) {
	ctx := context.Background()
	s := NewProtocol6(New("test")())()
	schemas, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typeName := TypeName + "_group"
	configure := &tfprotov6.ConfigureProviderRequest{Config: nullConfig(t, schemas.Provider)}
	validate := &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: nullConfig(t, schemas.ResourceSchemas[typeName])}

	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := s.ConfigureProvider(ctx, configure); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			if _, err := s.ValidateResourceConfig(ctx, validate); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

func TestGCDefaultsOnlyWhenTheUserSetNone(t *testing.T) {
	for _, tc := range []struct {
		environ []string
		ok      bool
	}{
		{[]string{"PATH=/usr/bin"}, true},
		{[]string{"GOGC="}, true},
		{[]string{"GOGC=off"}, false},
		{[]string{"GOGC=100"}, false},
		{[]string{"GOMEMLIMIT=1GiB"}, false},
		{[]string{"GOMAXPROCS=1"}, true},
	} {
		percent, limit, ok := gcDefaults(tc.environ)
		if ok != tc.ok {
			t.Errorf("gcDefaults(%q) ok = %v, want %v", tc.environ, ok, tc.ok)
		}
		if ok && (percent != 400 || limit != 96<<20) {
			t.Errorf("gcDefaults(%q) = %d, %d; want 400, 96 MiB", tc.environ, percent, limit)
		}
	}
}

// The variable must be the one terraform-plugin-go derives from the
// provider's address (TF_LOG_PROVIDER_ + its type, dashes as underscores).
func TestProviderLogEnvMatchesTheProviderAddress(t *testing.T) {
	parts := strings.Split(RegistryAddress, "/")
	want := "TF_LOG_PROVIDER_" + strings.ToUpper(strings.ReplaceAll(parts[len(parts)-1], "-", "_"))
	if logenv.ProviderLogEnv != want {
		t.Errorf("ProviderLogEnv = %s, want %s for %s", logenv.ProviderLogEnv, want, RegistryAddress)
	}
}

// rpcMethods are the methods of t shaped as an RPC: a context and one
// request (or request stream) in.
func rpcMethods(t reflect.Type) []reflect.Method {
	ctxType := reflect.TypeFor[context.Context]()
	var rpcs []reflect.Method
	for i := range t.NumMethod() {
		m := t.Method(i)
		if m.Type.NumIn() == 3 && m.Type.In(1) == ctxType && m.Type.In(2).Kind() == reflect.Pointer {
			rpcs = append(rpcs, m)
		}
	}
	return rpcs
}

// TestReleasingServerForwardsEveryRPC: every RPC the framework's server
// serves has a method of releasingServer's own, with the same signature.
// releasingServer embeds no interface, so a method it has is one it
// forwards; an RPC a terraform-plugin-go or framework release adds fails
// here until server_rpcs.go (or server_streams.go) forwards it.
func TestReleasingServerForwardsEveryRPC(t *testing.T) {
	fw := providerserver.NewProtocol6(New("test")())()
	wrapper := reflect.TypeFor[*releasingServer]()
	if wrapper.Elem().NumField() != 2 || wrapper.Elem().Field(0).Anonymous {
		t.Fatal("releasingServer must hold the framework's server in a named field, not embed it")
	}
	rpcs := rpcMethods(reflect.TypeOf(fw))
	if len(rpcs) < 36 { // terraform-plugin-framework v1.19 serves 36
		t.Fatalf("found %d RPCs on %T; the method walk is broken", len(rpcs), fw)
	}
	for _, m := range rpcs {
		w, ok := wrapper.MethodByName(m.Name)
		if !ok {
			t.Errorf("the framework serves %s, which releasingServer does not forward: add it to server_rpcs.go", m.Name)
			continue
		}
		// Compare the signatures without their receivers.
		if w.Type.NumIn() != m.Type.NumIn() || w.Type.In(2) != m.Type.In(2) || w.Type.NumOut() != m.Type.NumOut() || w.Type.Out(0) != m.Type.Out(0) {
			t.Errorf("releasingServer.%s is %s; the framework's is %s", m.Name, w.Type, m.Type)
		}
	}
	for _, iface := range []reflect.Type{
		reflect.TypeFor[tfprotov6.ProviderServer](),
		reflect.TypeFor[tfprotov6.ListResourceServer](),
		reflect.TypeFor[tfprotov6.ActionServer](),
		reflect.TypeFor[tfprotov6.StateStoreServer](),
	} {
		if !wrapper.Implements(iface) {
			t.Errorf("releasingServer does not implement %s", iface)
		}
	}
}

// callRPC calls the RPC m of s with a context that carries a payload and
// an empty request, reads the stream of a streaming RPC to its end (as
// tf6server does), cancels the context (as gRPC does when the RPC ends),
// and returns a channel closed when the payload is collected, with the
// answer: the response, or the items of the stream. An empty request is
// enough: the framework registers the context before it looks at the
// request, and answers most with an error diagnostic.
func callRPC(t *testing.T, s any, m reflect.Method) (<-chan struct{}, any) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &payload{}
	done := make(chan struct{})
	runtime.AddCleanup(p, func(ch chan struct{}) { close(ch) }, done)
	req := reflect.New(m.Type.In(2).Elem())
	var answer any
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Logf("%s with an empty request panicked (%v); its context is still checked", m.Name, r)
				answer = "panic"
			}
		}()
		out := m.Func.Call([]reflect.Value{reflect.ValueOf(s), reflect.ValueOf(context.WithValue(ctx, ctxKey{}, p)), req})
		answer = drainStream(out[0])
	}()
	return done, answer
}

// drainStream reads a streaming RPC's answer (a struct whose one field is
// an iterator) to its end and returns its items; any other answer is
// returned as it is.
func drainStream(resp reflect.Value) any {
	if resp.IsNil() || resp.Elem().NumField() != 1 || resp.Elem().Field(0).Kind() != reflect.Func {
		return resp.Interface()
	}
	seq := resp.Elem().Field(0)
	if seq.IsNil() {
		return nil
	}
	var items []any
	yield := reflect.MakeFunc(seq.Type().In(0), func(args []reflect.Value) []reflect.Value {
		items = append(items, args[0].Interface())
		return []reflect.Value{reflect.ValueOf(true)}
	})
	seq.Call([]reflect.Value{yield})
	return items
}

// answerSummary is what of an RPC's answer does not depend on map order in
// the framework (GetMetadata lists resources in map order): diagnostics in
// full, other lists by length, other fields by whether they are set, the
// items of a stream each so.
func answerSummary(v reflect.Value) any {
	switch {
	case !v.IsValid():
		return nil
	case v.Kind() == reflect.Interface:
		return answerSummary(v.Elem())
	case v.Kind() == reflect.Slice && v.Type() == reflect.TypeFor[[]any]():
		items := make([]any, v.Len())
		for i := range items {
			items[i] = answerSummary(v.Index(i))
		}
		return items
	case v.Kind() == reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return answerSummary(v.Elem())
	case v.Kind() != reflect.Struct:
		return v.Interface()
	}
	fields := map[string]any{}
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch {
		case name == "Diagnostics":
			var diags []string
			for _, d := range f.Interface().([]*tfprotov6.Diagnostic) {
				diags = append(diags, fmt.Sprintf("%s %q: %q", d.Severity, d.Summary, d.Detail))
			}
			fields[name] = diags
		case f.Kind() == reflect.Slice || f.Kind() == reflect.Map:
			fields[name] = f.Len()
		case f.Kind() == reflect.Pointer || f.Kind() == reflect.Interface || f.Kind() == reflect.Func:
			fields[name] = !f.IsNil()
		default:
			fields[name] = fmt.Sprintf("%v", f.Interface())
		}
	}
	return fields
}

// TestReleasingServerReleasesEveryRPC: after each RPC has returned (and a
// streaming one's stream was read), nothing the wrapper or the framework
// keeps references its context, and the wrapper answered what the
// framework answers. The control calls the framework's server directly: an
// RPC whose context it does not retain proves nothing for the wrapper and
// is skipped, and when it retains none the wrapper can go (see server.go
// and internal/provider/README.md).
func TestReleasingServerReleasesEveryRPC(t *testing.T) {
	retained := 0
	for _, m := range rpcMethods(reflect.TypeFor[*releasingServer]()) {
		t.Run(m.Name, func(t *testing.T) {
			fw := providerserver.NewProtocol6(New("test")())()
			fm, ok := reflect.TypeOf(fw).MethodByName(m.Name)
			if !ok {
				t.Fatalf("the framework's server has no %s", m.Name)
			}
			fwDone, want := callRPC(t, fw, fm)
			s := NewProtocol6(New("test")())()
			done, got := callRPC(t, s, m)
			if got, want := answerSummary(reflect.ValueOf(got)), answerSummary(reflect.ValueOf(want)); !reflect.DeepEqual(got, want) {
				t.Errorf("%s through the wrapper answered %+v; the framework answers %+v", m.Name, got, want)
			}
			if freed(fwDone, 200*time.Millisecond) {
				t.Skipf("the framework no longer keeps %s's context (control)", m.Name)
			}
			runtime.KeepAlive(fw)
			retained++
			if !freed(done, 30*time.Second) {
				t.Errorf("%s's context is still referenced after the RPC returned: it must go through call (server_rpcs.go) or streamContext (server_streams.go)", m.Name)
			}
			runtime.KeepAlive(s)
		})
	}
	if retained == 0 {
		t.Skip("the framework retains no RPC's context any more; NewProtocol6's wrapper can go (see server.go)")
	}
}
