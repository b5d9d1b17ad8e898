package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-log/tflogtest"
	"github.com/hashicorp/terraform-plugin-testing/echoprovider"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// Hostile servers on loopback, where the in-repo coordinator cannot
// misbehave that way: a proxy echoing the refused request, a server asking
// to wait a day, an answer larger than the client reads, a TLS port spoken
// to in plain HTTP (issue 42, items 1, 2 and 6).

const (
	hostileUser      = "admin"
	hostilePassword  = `main"pw<&>-42`
	hostileEphemeral = `eph"pw<&>-42`
)

// hostileServer counts requests and answers each with the handler of the
// moment.
type hostileServer struct {
	*httptest.Server
	requests atomic.Int32
	mu       sync.Mutex
	handle   http.HandlerFunc
}

func newHostileServer(t *testing.T, tlsServer bool, handle http.HandlerFunc) *hostileServer {
	h := &hostileServer{handle: handle}
	serve := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.requests.Add(1)
		h.mu.Lock()
		handle := h.handle
		h.mu.Unlock()
		handle(w, r)
	})
	if tlsServer {
		h.Server = httptest.NewTLSServer(serve)
	} else {
		h.Server = httptest.NewServer(serve)
	}
	t.Cleanup(h.Close)
	return h
}

func (h *hostileServer) set(handle http.HandlerFunc) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handle = handle
}

// hostileConfig is a provider block for endpoint (plus the echo provider,
// which makes Terraform open an ephemeral token); settings replace the
// short retry defaults of the same name.
func hostileConfig(endpoint string, settings ...string) string {
	extra := settings
	for _, def := range []string{`retry_wait_min = "50ms"`, `retry_wait_max = "500ms"`, "max_retries = 1"} {
		if !slices.ContainsFunc(settings, func(s string) bool { return strings.HasPrefix(s, strings.Fields(def)[0]+" ") }) {
			extra = append(extra, def)
		}
	}
	return fmt.Sprintf(`
terraform {
  required_providers {
    redisstreamcoordinator = { source = %q }
    echo                   = { source = "%s/echo" }
  }
}

provider "redisstreamcoordinator" {
  endpoint       = %q
  username       = %q
  password       = %q
  %s
}
`, acctest.ProviderSource, acctest.ProviderNamespace, endpoint, hostileUser, hostilePassword, strings.Join(extra, "\n  "))
}

const hostileDataSource = `
data "redisstreamcoordinator_group" "g" {
  stream_prefix  = "orders"
  consumer_group = "svc"
}
`

// hostileFactories serve the provider with its diagnostics recorded in d,
// wrapped (outside the recording) by wrap.
func hostileFactories(d *acctest.Diagnostics, wrap func(tfprotov6.ProviderServer) tfprotov6.ProviderServer) map[string]func() (tfprotov6.ProviderServer, error) {
	recorded := d.Factories(TypeName, testServer)[TypeName]
	return map[string]func() (tfprotov6.ProviderServer, error){
		TypeName: func() (tfprotov6.ProviderServer, error) {
			s, err := recorded()
			if err != nil {
				return nil, err
			}
			return wrap(s), nil
		},
		"echo": echoprovider.NewProviderServer(),
	}
}

func unwrapped(s tfprotov6.ProviderServer) tfprotov6.ProviderServer { return s }

// echoRequest answers status with a page quoting the request: line,
// Authorization header and body, as a WAF or proxy may.
func echoRequest(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, "<html><body>Request refused. echo: %s %s Authorization: %s body: %s</body></html>",
			r.Method, r.URL, r.Header.Get("Authorization"), b)
	}
}

// A page echoing the refused request (400, 401, 500, 502; the Basic header,
// the login body, the ephemeral token's login body) puts no secret into
// what terraform plan shows.
func TestAccReliability_echoedRequestShowsNoSecret(t *testing.T) {
	srv := newHostileServer(t, false, echoRequest(400))
	d := &acctest.Diagnostics{}
	echoed := diagRe("echo: ", "Authorization:")
	steps := []resource.TestStep{}
	for _, status := range []int{400, 401, 500, 502} {
		steps = append(steps, resource.TestStep{
			PreConfig:   func() { srv.set(echoRequest(status)) },
			Config:      hostileConfig(srv.URL) + hostileDataSource,
			ExpectError: diagRe("answered "+strconv.Itoa(status), "GET /coord/v1/streams/orders/groups/svc", "echo: GET", "Authorization: Basic ***"),
		})
	}
	steps = append(steps, resource.TestStep{
		PreConfig:   func() { srv.set(echoRequest(400)) },
		Config:      hostileConfig(srv.URL, "login = true") + hostileDataSource,
		ExpectError: diagRe("answered 400", "POST /coord/v1/auth/login", "echo: POST", `body: {"username":"admin","password":***}`),
	}, resource.TestStep{
		Config: hostileConfig(srv.URL) + fmt.Sprintf(`
ephemeral "redisstreamcoordinator_token" "t" {
  username = "eph"
  password = %q
}

provider "echo" {
  data = ephemeral.redisstreamcoordinator_token.t
}

resource "echo" "token" {}
`, hostileEphemeral),
		ExpectError: diagRe("answered 400", "POST /coord/v1/auth/login", "echo: POST", `"password":***`),
	})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: hostileFactories(d, unwrapped),
		Steps:                    steps,
	})
	errs := strings.Join(d.Errors(), "\n")
	if !echoed.MatchString(errs) {
		t.Fatalf("no diagnostic quotes the echo, so the check proves nothing:\n%s", errs)
	}
	for _, s := range hostileSecrets() {
		if strings.Contains(errs, s) {
			t.Errorf("a diagnostic quotes a secret (%q):\n%s", s, errs)
		}
	}
}

// hostileSecrets are the configured secrets in the forms an echo shows them.
func hostileSecrets() []string {
	var out []string
	for _, s := range []string{hostilePassword, hostileEphemeral, base64.StdEncoding.EncodeToString([]byte(hostileUser + ":" + hostilePassword))} {
		j, _ := json.Marshal(s)
		out = append(out, s, string(j[1:len(j)-1]))
	}
	return out
}

// A Retry-After of a billion seconds fails the data source at once, quoting
// it, after one request; a read whose retry would outlast read_timeout fails
// at once too.
func TestAccReliability_hugeRetryAfterFailsAtOnce(t *testing.T) {
	srv := newHostileServer(t, false, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "1000000000")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"status":"TOO_MANY_REQUESTS","errorCode":"RATE_LIMIT_EXCEEDED","message":"Coordinator API rate limit exceeded"}`)
	})
	d := &acctest.Diagnostics{}
	var firstStep int32
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: hostileFactories(d, unwrapped),
		Steps: []resource.TestStep{{
			Config: hostileConfig(srv.URL, "max_retries = 10") + hostileDataSource,
			ExpectError: diagRe(`Not retried: the server asked to retry after Retry-After: "1000000000", longer than the longest wait the provider honours (60s`,
				"answered 429", "RATE_LIMIT_EXCEEDED", "raise retry_wait_max"),
		}, {
			PreConfig: func() {
				firstStep = srv.requests.Swap(0)
				srv.set(func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusServiceUnavailable)
					_, _ = io.WriteString(w, `{"status":"SERVICE_UNAVAILABLE","errorCode":"COORDINATOR_STATE_MUTEX_UNAVAILABLE","message":"busy"}`)
				})
			},
			Config: hostileConfig(srv.URL, "max_retries = 10", `retry_wait_min = "1h"`, `retry_wait_max = "1h"`, `read_timeout = "1m"`) +
				hostileDataSource,
			ExpectError: diagRe("Not retried: the next retry would wait", "past the operation deadline", "read_timeout for refreshes and data sources"),
		}},
	})
	// One read per step (Terraform reads a data source once per plan).
	if n := srv.requests.Load(); firstStep != 1 || n != 1 {
		t.Errorf("the steps sent %d and %d requests, want 1 each", firstStep, n)
	}
	if errs := strings.Join(d.Errors(), "\n"); strings.Contains(errs, "raise max_retries") {
		t.Errorf("a wait that never ran is blamed on max_retries:\n%s", errs)
	}
}

// cancelOnRetry cancels a data source read as soon as the client logs that
// it will wait to retry: what Terraform does on Ctrl-C (StopProvider
// cancels the request contexts), at the one moment that matters.
type cancelOnRetry struct {
	tfprotov6.ProviderServer
	mu     sync.Mutex
	cancel context.CancelFunc
}

func (s *cancelOnRetry) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("; retrying in ")) {
		s.mu.Lock()
		if s.cancel != nil {
			s.cancel()
		}
		s.mu.Unlock()
	}
	return len(p), nil
}

func (s *cancelOnRetry) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	return s.ProviderServer.ReadDataSource(overlay{Context: ctx, top: tflogtest.RootLogger(context.Background(), s)}, req)
}

// An interrupted Retry-After wait says it was interrupted, not "still
// exceeded after retrying … raise max_retries".
func TestAccReliability_interruptedRetryWaitSaysInterrupted(t *testing.T) {
	srv := newHostileServer(t, false, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "30")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"status":"TOO_MANY_REQUESTS","errorCode":"RATE_LIMIT_EXCEEDED","message":"Coordinator API rate limit exceeded"}`)
	})
	d := &acctest.Diagnostics{}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: hostileFactories(d, func(s tfprotov6.ProviderServer) tfprotov6.ProviderServer {
			return &cancelOnRetry{ProviderServer: s}
		}),
		Steps: []resource.TestStep{{
			Config:      hostileConfig(srv.URL, "max_retries = 10") + hostileDataSource,
			ExpectError: diagRe("Stopped: the wait to retry was interrupted after 1 attempt(s), and nothing more was sent", "answered 429"),
		}},
	})
	if errs := strings.Join(d.Errors(), "\n"); strings.Contains(errs, "max_retries") {
		t.Errorf("an interrupted wait is blamed on max_retries:\n%s", errs)
	}
}

// An http:// endpoint on a TLS port shows the fix, not the server's 400.
func TestAccReliability_httpEndpointOnTLSPortShowsTheFix(t *testing.T) {
	srv := newHostileServer(t, true, http.NotFound)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: hostileFactories(&acctest.Diagnostics{}, unwrapped),
		Steps: []resource.TestStep{{
			Config:      hostileConfig(strings.Replace(srv.URL, "https://", "http://", 1)) + hostileDataSource,
			ExpectError: diagRe("http endpoint, TLS server", "The endpoint uses http://, but the server speaks TLS: use an https:// endpoint."),
		}},
	})
}

// A well-formed 40 MiB answer is reported as the client's 32 MiB limit,
// with its size, not as malformed JSON from a proxy.
func TestAccReliability_answerOverTheSizeLimit(t *testing.T) {
	body, _ := json.Marshal(map[string]any{"streamPrefix": "orders", "consumerGroup": "svc", "shardCount": 2, "pad": strings.Repeat("x", 40<<20)})
	srv := newHostileServer(t, false, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
	d := &acctest.Diagnostics{}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: hostileFactories(d, unwrapped),
		Steps: []resource.TestStep{{
			Config:      hostileConfig(srv.URL) + hostileDataSource,
			ExpectError: diagRe("the answer is larger than the provider's limit of 32 MiB on one response (it was at least 40 MiB)"),
		}},
	})
	if errs := strings.Join(d.Errors(), "\n"); strings.Contains(errs, "not the JSON the coordinator sends") {
		t.Errorf("a size limit is reported as malformed JSON:\n%s", errs)
	}
}
