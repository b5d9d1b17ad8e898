package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// providerLog captures what the provider logs through tflog (its root logger
// and every subsystem, the client's "coordinator" one included) at TRACE, as
// TF_LOG=TRACE would write it, in JSON lines.
//
// A provider served in-process by terraform-plugin-testing logs through a
// sink configured from process-wide environment variables (TF_LOG,
// TF_LOG_PATH_MASK), which parallel tests cannot set for themselves. Instead
// every RPC's context gets a fresh TRACE root logger writing here
// (tflogtest.RootLogger), below the plugin server and above the provider,
// exactly where the plugin server would have put its own.
type providerLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *providerLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *providerLog) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.buf.String()
	l.buf.Reset()
	return s
}

// loggingFactories serves the test's provider with its log captured.
func (a *accTest) loggingFactories(log io.Writer) map[string]func() (tfprotov6.ProviderServer, error) {
	inner := a.factories()[TypeName]
	return map[string]func() (tfprotov6.ProviderServer, error){
		TypeName: func() (tfprotov6.ProviderServer, error) {
			s, err := inner()
			if err != nil {
				return nil, err
			}
			return &loggingServer{ProviderServer: s, log: log}, nil
		},
	}
}

// loggingServer swaps the root logger of every RPC that runs provider code.
type loggingServer struct {
	tfprotov6.ProviderServer
	log io.Writer
}

// with gives ctx a TRACE provider root logger writing to the capture. The
// test framework's logging sink in ctx would capture any root logger built
// on ctx itself, so the logger is built on an empty context and laid over
// ctx, which keeps its deadline, cancellation and other values.
func (s *loggingServer) with(ctx context.Context) context.Context {
	return overlay{Context: ctx, top: tflogtest.RootLogger(context.Background(), s.log)}
}

// overlay answers Value from top first, then from the embedded context.
type overlay struct {
	context.Context
	top context.Context
}

func (o overlay) Value(key any) any {
	if v := o.top.Value(key); v != nil {
		return v
	}
	return o.Context.Value(key)
}

func (s *loggingServer) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return s.ProviderServer.ConfigureProvider(s.with(ctx), req)
}

func (s *loggingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return s.ProviderServer.ReadResource(s.with(ctx), req)
}

func (s *loggingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return s.ProviderServer.PlanResourceChange(s.with(ctx), req)
}

func (s *loggingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return s.ProviderServer.ApplyResourceChange(s.with(ctx), req)
}

func (s *loggingServer) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return s.ProviderServer.ImportResourceState(s.with(ctx), req)
}

func (s *loggingServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return s.ProviderServer.ReadDataSource(s.with(ctx), req)
}

func (s *loggingServer) OpenEphemeralResource(ctx context.Context, req *tfprotov6.OpenEphemeralResourceRequest) (*tfprotov6.OpenEphemeralResourceResponse, error) {
	return s.ProviderServer.OpenEphemeralResource(s.with(ctx), req)
}

// authRecorder fronts the coordinator and remembers every Authorization
// header the provider sent: the exact Basic values and Bearer tokens that must
// not reach the log, including tokens the provider obtained by logging in.
type authRecorder struct {
	next http.Handler
	mu   sync.Mutex
	seen map[string]bool
}

func (r *authRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if v := req.Header.Get("Authorization"); v != "" {
		r.mu.Lock()
		r.seen[v] = true
		r.mu.Unlock()
	}
	r.next.ServeHTTP(w, req)
}

// secrets returns every credential sent so far, whole and without the
// scheme keyword.
func (r *authRecorder) secrets(scheme string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for v := range r.seen {
		if s, ok := strings.CutPrefix(v, scheme+" "); ok {
			out = append(out, v, s)
		}
	}
	return out
}

// requestLine is the client's per-attempt log message: method, API path and
// status, e.g. "POST /coord/v1/streams/p/groups/svc -> 201".
var requestLine = regexp.MustCompile(`^(GET|POST|DELETE) /coord/v1/\S+ -> \d{3}$`)

// expectCleanLog is a step check on the log captured since the last one:
// it must show request lines with request ids and every entry of mustShow
// ("message" or "field=value"), so the check cannot pass on an empty log,
// and none of the secrets anywhere.
func expectCleanLog(log *providerLog, mustShow []string, secrets func() []string) func(*terraform.State) error {
	return func(*terraform.State) error {
		text := log.take()
		entries, err := tflogtest.MultilineJSONDecode(strings.NewReader(text))
		if err != nil {
			return fmt.Errorf("decoding the captured log: %w", err)
		}
		shown := map[string]bool{}
		requests := 0
		for _, e := range entries {
			msg, _ := e["@message"].(string)
			shown[msg] = true
			for k, v := range e {
				shown[fmt.Sprintf("%s=%v", k, v)] = true
			}
			if id, _ := e["request_id"].(string); requestLine.MatchString(msg) && strings.HasPrefix(id, "terraform-") {
				requests++
			}
		}
		if requests == 0 {
			return fmt.Errorf("the captured provider log shows no request lines with request ids; log:\n%s", text)
		}
		for _, want := range mustShow {
			if !shown[want] {
				return fmt.Errorf("the captured provider log lacks %q; log:\n%s", want, text)
			}
		}
		list := secrets()
		if len(list) == 0 {
			return fmt.Errorf("no credentials were recorded on the wire, so the check would prove nothing")
		}
		for _, secret := range list {
			if strings.Contains(text, secret) {
				return fmt.Errorf("the provider log contains a secret (%d characters, starting %q)", len(secret), secret[:4])
			}
		}
		return nil
	}
}

func TestAccReliability_secretsNeverLogged(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "records the credentials the provider sends")
	rec := &authRecorder{next: c.Handler(), seen: map[string]bool{}}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	env := a.withEndpoint(srv.URL)
	log := &providerLog{}
	p := acctest.RandomName("secret")
	password := env.Writer.Password
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(env.Writer.Username+":"+password))

	token, err := env.Client().Login(ctxT(t), env.Writer.Username, password)
	if err != nil {
		t.Fatalf("login for the token step: %v", err)
	}
	tokenConfig := fmt.Sprintf(`
terraform {
  required_providers {
    redisstreamcoordinator = { source = %q }
  }
}

provider "redisstreamcoordinator" {
  endpoint       = %q
  token          = %q
  retry_wait_min = "50ms"
  retry_wait_max = "500ms"
}
`, acctest.ProviderSource, env.Endpoint, token.AccessToken)

	// Each step adds a group and scales it, so each auth mode is logged
	// doing reads, creates, scales and waits.
	resources := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			q := fmt.Sprintf("%s-%d", p, i)
			b.WriteString(groupHCL(fmt.Sprintf("g%d", i), q, "svc", "initial_shard_count = 3"))
			b.WriteString(shardCountHCL(fmt.Sprintf("s%d", i), q, "svc", 2, fmt.Sprintf("depends_on = [redisstreamcoordinator_group.g%d]", i)))
		}
		return b.String()
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.loggingFactories(log),
		Steps: []resource.TestStep{
			{
				PreConfig: func() { log.take() },
				Config:    env.ProviderConfig() + resources(1),
				Check: expectCleanLog(log, []string{"POST /coord/v1/streams/" + p + "-0/scale -> 202", "auth=basic"},
					func() []string { return append(rec.secrets("Basic"), password, basic) }),
			},
			{
				PreConfig: func() { log.take() },
				Config:    env.ProviderConfig("login = true") + resources(2),
				Check: expectCleanLog(log, []string{"POST /coord/v1/auth/login -> 200", "auth=login", "POST /coord/v1/streams/" + p + "-1/scale -> 202"},
					func() []string { return append(rec.secrets("Bearer"), password, basic) }),
			},
			{
				PreConfig: func() { log.take() },
				Config:    tokenConfig + resources(3),
				Check: expectCleanLog(log, []string{"auth=bearer", "POST /coord/v1/streams/" + p + "-2/scale -> 202"},
					func() []string { return append(rec.secrets("Bearer"), token.AccessToken) }),
			},
		},
	})
}
