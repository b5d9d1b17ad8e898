package provider

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// Misbehaving answers become diagnostics that say what failed, with the
// status and request id, and what to do; none of them may crash the provider.
// Each case refreshes an existing group while the coordinator misbehaves on
// its GET, then lets a last step see a healthy coordinator again so the
// test's destroy can run.

// diagRe matches the fragments in order anywhere in the error output, each
// literally except that a space matches any run of whitespace: Terraform
// wraps diagnostic text.
func diagRe(fragments ...string) *regexp.Regexp {
	parts := make([]string, len(fragments))
	for i, f := range fragments {
		words := strings.Fields(f)
		for j := range words {
			words[j] = regexp.QuoteMeta(words[j])
		}
		parts[i] = strings.Join(words, `\s+`)
	}
	return regexp.MustCompile(`(?s)` + strings.Join(parts, ".*"))
}

// misbehavingRefresh is the shared three-step shape: create, refresh against
// the fault (expecting errRe), refresh again without it.
func misbehavingRefresh(t *testing.T, a *accTest, p string, providerExtra []string, fault coordinator.Fault, errRe *regexp.Regexp) {
	c := a.env.RequireInRepo(t, "injects the misbehaviour")
	config := a.env.ProviderConfig(providerExtra...) + groupHCL("test", p, "svc", "initial_shard_count = 2")
	fault.Method, fault.Path = "GET", "/coord/v1/streams/"+p+"/groups/svc"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig:   func() { c.InjectFault(fault) },
				Config:      config,
				ExpectError: errRe,
			},
			{Config: config, Check: a.expectGroup(p, "svc", shardCountIs(2))},
		},
	})
}

func TestAccReliability_slowResponsesBeyondRequestTimeout(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("slow")
	// Every attempt (the first and max_retries = 2 more) waits longer than
	// request_timeout; the coordinator never answers them (a held request
	// ends when the coordinator closes), so no slow machine can make it
	// answer before the client gives up.
	misbehavingRefresh(t, a, p, []string{`request_timeout = "500ms"`, "max_retries = 2"},
		coordinator.Fault{Kind: coordinator.FaultDelay, Delay: time.Hour, Times: 3},
		diagRe(`Failed to read group "svc" under stream prefix "`+p+`"`, "GET /coord/v1/streams/"+p+"/groups/svc",
			"Client.Timeout exceeded", "(request id terraform-", "-get-group-", ", 3 attempt(s))",
			"did not answer within request_timeout", "raise request_timeout"))
}

func TestAccReliability_malformedJSON(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("truncated")
	misbehavingRefresh(t, a, p, nil,
		coordinator.Fault{Kind: coordinator.FaultRespond, Status: 200, ContentType: "application/json",
			Body: `{"streamPrefix":"` + p + `","consumerGroup":"svc","shardCount":`},
		diagRe(`Failed to read group "svc" under stream prefix "`+p+`"`, "GET /coord/v1/streams/"+p+"/groups/svc:",
			"decoding 200 response (request id terraform-", "unexpected end of JSON input", `body: {"streamPrefix"`,
			"not the JSON the coordinator sends", "Check that endpoint points at the coordinator"))
}

func TestAccReliability_htmlErrorPageFromProxy(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("proxied")
	const page = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n" +
		"<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n"
	misbehavingRefresh(t, a, p, []string{"max_retries = 2"},
		coordinator.Fault{Kind: coordinator.FaultRespond, Status: 502, ContentType: "text/html", Body: page, Times: 3},
		diagRe(`Failed to read group "svc" under stream prefix "`+p+`"`, "answered 502 Bad Gateway to GET /coord/v1/streams/"+p+"/groups/svc",
			"unexpected non-JSON response: <html> <head><title>502 Bad Gateway</title>", "Request id: terraform-", "Attempts: 3",
			"came from a proxy or load balancer in front of the coordinator", "run terraform again"))
}

func TestAccReliability_emptyUnauthorizedAndForbiddenBodies(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("denied")
	wrong := acctest.Credentials{Username: a.env.Writer.Username, Password: "not-the-password"}
	group := groupHCL("test", p, "svc", "initial_shard_count = 2")
	// The coordinator's interceptor answers 401 and 403 with empty bodies;
	// the diagnostics must still say which credential or role is wrong.
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config: a.env.ProviderConfigAs(wrong) + group,
				ExpectError: diagRe("answered 401 Unauthorized to GET /coord/v1/monitoring/groups",
					"rejected the username/password (HTTP Basic)", "Request id: terraform-", "Check username/password or token"),
			},
			{
				Config: a.env.ProviderConfigAs(wrong, "login = true") + group,
				ExpectError: diagRe("answered 401 Unauthorized to POST /coord/v1/auth/login",
					"login failed: the coordinator rejected the username or password", "Check username/password or token"),
			},
			{
				// READ may list the groups but not create one.
				Config: a.env.ProviderConfigAs(a.env.Reader) + group,
				ExpectError: diagRe("answered 403 Forbidden to POST /coord/v1/streams/"+p+"/groups/svc",
					"lacks the WRITE role", "Request id: terraform-", "Ask the coordinator's operators to grant it"),
			},
			{Config: a.env.ProviderConfig() + group},
			{
				// MEMBER cannot even read: the refresh fails.
				Config: a.env.ProviderConfigAs(a.env.Member) + group,
				ExpectError: diagRe(`Failed to read group "svc" under stream prefix "`+p+`"`,
					"answered 403 Forbidden to GET /coord/v1/streams/"+p+"/groups/svc", "lacks the READ role"),
			},
			{Config: a.env.ProviderConfig() + group},
		},
	})
}

func TestTransportHintNamesTheFix(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"refused", &url.Error{Op: "Get", URL: "http://127.0.0.1:1/coord/v1/monitoring/groups",
			Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}, "Could not connect to the coordinator"},
		{"wrong host", &url.Error{Op: "Get", URL: "https://10.0.0.1/coord/v1/monitoring/groups",
			Err: &tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: &x509.Certificate{DNSNames: []string{"coordinator.internal"}}, Host: "10.0.0.1"}}},
			"not valid for the host in endpoint"},
		{"unknown CA", &url.Error{Op: "Get", URL: "https://coordinator.internal/coord/v1/monitoring/groups",
			Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}, "set ca_cert_pem"},
		{"operation deadline", fmt.Errorf("wrapped: %w", context.DeadlineExceeded), ""},
	}
	for _, tc := range cases {
		got := apiErrorDetail(tc.err, "")
		if tc.want == "" {
			if got != tc.err.Error() {
				t.Errorf("%s: want the bare error, got %q", tc.name, got)
			}
			continue
		}
		if !strings.HasPrefix(got, tc.err.Error()) || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q lacks the error or the hint %q", tc.name, got, tc.want)
		}
	}
}

// TestAccReliability_storeFailureOnReadsIsRetried: Spring's generic 500 of a
// Redis store or state-mutex failure (no errorCode, CONTRACT §9) is retried
// on reads: two of them during a refresh cost two more GETs and nothing else.
func TestAccReliability_storeFailureOnReadsIsRetried(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "answers reads with a store failure's generic 500")
	p := acctest.RandomName("store500")
	path := "/coord/v1/streams/" + p + "/groups/svc"
	config := a.env.ProviderConfig() + groupHCL("test", p, "svc", "initial_shard_count = 2")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					c.ResetRequestCounts()
					c.InjectFault(coordinator.Fault{Method: "GET", Path: path, Kind: coordinator.FaultStoreError, Times: 2})
				},
				Config:   config,
				PlanOnly: true,
				Check: func(*terraform.State) error {
					if n := c.RequestCount("GET", coordinator.RouteGroup); n != 3 {
						return fmt.Errorf("want the failed GET, its two retries and nothing more: %d GETs of the group", n)
					}
					return nil
				},
			},
		},
	})
}

// TestAccReliability_storeFailureOnReadsExhausted: when the retries run out,
// the plan fails with the status, the request id and the attempts.
func TestAccReliability_storeFailureOnReadsExhausted(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("store500")
	misbehavingRefresh(t, a, p, []string{"max_retries = 2"},
		coordinator.Fault{Kind: coordinator.FaultStoreError, Times: 3},
		diagRe(`Failed to read group "svc" under stream prefix "`+p+`"`, "answered 500 Internal Server Error to GET /coord/v1/streams/"+p+"/groups/svc",
			"Request id: terraform-", "-get-group-", "Attempts: 3", "Spring Boot's generic error", "Redis store or its state mutex fails",
			"GET /coord/v1/monitoring/health", "run terraform again"))
}
