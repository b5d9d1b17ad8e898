package acctest_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

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
		reflect.TypeFor[tfprotov6.ProviderServerWithListResource](),
		reflect.TypeFor[tfprotov6.ProviderServerWithActions](),
		reflect.TypeFor[tfprotov6.ProviderServerWithStateStores](),
	} {
		if !s.Implements(iface) {
			t.Errorf("the recording server does not implement %s", iface)
		}
	}
}

// TestRecordingServerRecordsEveryRPC: each RPC whose answer carries
// diagnostics has them recorded. An empty request makes most RPCs answer
// with an error diagnostic (no such resource type, no configuration); the
// few that answer an empty request without one prove nothing and are
// named in the log.
func TestRecordingServerRecordsEveryRPC(t *testing.T) {
	checked := 0
	for _, m := range rpcMethods(reflect.TypeOf(recordingServerOf(t, &acctest.Diagnostics{}))) {
		d := &acctest.Diagnostics{}
		s := recordingServerOf(t, d)
		var out []reflect.Value
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Logf("%s with an empty request panicked (%v): not checked", m.Name, r)
				}
			}()
			out = m.Func.Call([]reflect.Value{reflect.ValueOf(s), reflect.ValueOf(context.Background()), reflect.New(m.Type.In(2).Elem())})
		}()
		if out == nil || out[0].IsNil() {
			continue
		}
		f := out[0].Elem().FieldByName("Diagnostics")
		if !f.IsValid() {
			continue
		}
		want := f.Interface().([]*tfprotov6.Diagnostic)
		if len(want) == 0 {
			t.Logf("%s answered an empty request without diagnostics: not checked", m.Name)
			continue
		}
		checked++
		if got := len(d.Errors()) + len(d.Warnings()); got != len(want) {
			t.Errorf("%s answered %d diagnostics; the recording server recorded %d", m.Name, len(want), got)
		}
	}
	if checked < 20 {
		t.Errorf("only %d RPCs answered an empty request with diagnostics; the check is broken", checked)
	}
}
