package acctest_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/provider"
)

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

// recordingServerOf is the server the harness's factories hand Terraform.
func recordingServerOf(t *testing.T, d *acctest.Diagnostics) tfprotov6.ProviderServer {
	t.Helper()
	s, err := d.Factories(provider.TypeName, provider.NewProtocol6(provider.New("test")()))[provider.TypeName]()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRecordingServerForwardsEveryRPC: every RPC the framework's server
// serves has a method of the recording server's own (it embeds no
// interface), so none reaches the provider unrecorded, and Terraform finds
// the optional ones (list resources, actions, state stores).
func TestRecordingServerForwardsEveryRPC(t *testing.T) {
	s := reflect.TypeOf(recordingServerOf(t, &acctest.Diagnostics{}))
	fw := providerserver.NewProtocol6(provider.New("test")())()
	rpcs := rpcMethods(reflect.TypeOf(fw))
	if len(rpcs) < 36 { // terraform-plugin-framework v1.19 serves 36
		t.Fatalf("found %d RPCs on %T; the method walk is broken", len(rpcs), fw)
	}
	for _, m := range rpcs {
		if _, ok := s.MethodByName(m.Name); !ok {
			t.Errorf("the framework serves %s, which the recording server does not forward: add it to recording_server.go", m.Name)
		}
	}
	for _, iface := range []reflect.Type{
		reflect.TypeFor[tfprotov6.ProviderServer](),
		reflect.TypeFor[tfprotov6.ListResourceServer](),
		reflect.TypeFor[tfprotov6.ActionServer](),
		reflect.TypeFor[tfprotov6.StateStoreServer](),
	} {
		if !s.Implements(iface) {
			t.Errorf("the recording server does not implement %s", iface)
		}
	}
}

// providerConfig is a configuration of the provider's schema with the
// given string attributes set and every other attribute null.
func providerConfig(t *testing.T, s tfprotov6.ProviderServer, set map[string]string) *tfprotov6.DynamicValue {
	t.Helper()
	schemas, err := s.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ, ok := schemas.Provider.ValueType().(tftypes.Object)
	if !ok {
		t.Fatalf("the provider schema's type is %T", schemas.Provider.ValueType())
	}
	vals := make(map[string]tftypes.Value, len(typ.AttributeTypes))
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
		if v, ok := set[name]; ok {
			vals[name] = tftypes.NewValue(at, v)
		}
	}
	dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, vals))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

// requestFor is the request TestRecordingServerRecordsEveryRPC sends: an
// empty one, which most RPCs answer with an error diagnostic (no such
// resource type, no configuration), or for the provider's own RPCs one that
// makes them answer with diagnostics (an empty ConfigureProvider request
// would make the framework panic).
func requestFor(t *testing.T, s tfprotov6.ProviderServer, m reflect.Method) reflect.Value {
	t.Helper()
	switch m.Name {
	case "ConfigureProvider": // no endpoint anywhere
		t.Setenv("REDIS_STREAM_COORDINATOR_ENDPOINT", "")
		return reflect.ValueOf(&tfprotov6.ConfigureProviderRequest{Config: providerConfig(t, s, nil)})
	case "ValidateProviderConfig": // a token beside a username
		return reflect.ValueOf(&tfprotov6.ValidateProviderConfigRequest{Config: providerConfig(t, s, map[string]string{
			"endpoint": "http://127.0.0.1:1", "token": "t", "username": "u",
		})})
	}
	return reflect.New(m.Type.In(2).Elem())
}

// answerDiagnostics are the diagnostics of an RPC's answer, those of every
// item of a streamed answer (read to its end, as tf6server does) included.
func answerDiagnostics(resp reflect.Value) (diags []*tfprotov6.Diagnostic, carries bool) {
	if resp.IsNil() {
		return nil, false
	}
	r := resp.Elem()
	if f := r.FieldByName("Diagnostics"); f.IsValid() {
		return f.Interface().([]*tfprotov6.Diagnostic), true
	}
	if r.NumField() != 1 || r.Field(0).Kind() != reflect.Func || r.Field(0).IsNil() {
		return nil, false
	}
	seq := r.Field(0)
	yield := reflect.MakeFunc(seq.Type().In(0), func(args []reflect.Value) []reflect.Value {
		item := args[0]
		if f := item.FieldByName("Diagnostics"); f.IsValid() {
			diags = append(diags, f.Interface().([]*tfprotov6.Diagnostic)...)
		}
		if ty := item.FieldByName("Type"); ty.IsValid() && !ty.IsNil() {
			if c, ok := ty.Interface().(tfprotov6.CompletedInvokeActionEventType); ok {
				diags = append(diags, c.Diagnostics...)
			}
		}
		return []reflect.Value{reflect.ValueOf(true)}
	})
	seq.Call([]reflect.Value{yield})
	return diags, true
}

// TestRecordingServerRecordsEveryRPC: each RPC whose answer carries
// diagnostics, streamed ones included, has them recorded, once. The few
// RPCs that answer their request without a diagnostic prove nothing and
// are named in the log; the provider's own (ConfigureProvider,
// ValidateProviderConfig), whose diagnostics the credential tests scan for
// secrets, and the streams must be among those checked.
func TestRecordingServerRecordsEveryRPC(t *testing.T) {
	checked := map[string]bool{}
	for _, m := range rpcMethods(reflect.TypeOf(recordingServerOf(t, &acctest.Diagnostics{}))) {
		d := &acctest.Diagnostics{}
		s := recordingServerOf(t, d)
		req := requestFor(t, s, m)
		var want []*tfprotov6.Diagnostic
		carries := false
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked (%v)", m.Name, r)
				}
			}()
			out := m.Func.Call([]reflect.Value{reflect.ValueOf(s), reflect.ValueOf(context.Background()), req})
			want, carries = answerDiagnostics(out[0])
		}()
		if !carries {
			continue
		}
		if len(want) == 0 {
			t.Logf("%s answered without diagnostics: not checked", m.Name)
			continue
		}
		checked[m.Name] = true
		if got := len(d.Errors()) + len(d.Warnings()); got != len(want) {
			t.Errorf("%s answered %d diagnostics; the recording server recorded %d", m.Name, len(want), got)
		}
	}
	for _, name := range []string{"ConfigureProvider", "ValidateProviderConfig", "ImportResourceState", "ValidateResourceConfig", "ListResource", "InvokeAction", "ReadStateBytes"} {
		if !checked[name] {
			t.Errorf("%s answered its request without diagnostics, so its recording was not checked", name)
		}
	}
	if len(checked) < 30 {
		t.Errorf("only %d RPCs answered with diagnostics; the check is broken", len(checked))
	}
}
