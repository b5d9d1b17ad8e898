package provider

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

func TestPlainHTTPWarning(t *testing.T) {
	basic := client.Config{Username: "ci", Password: "pw"}
	for _, tc := range []struct {
		endpoint string
		cfg      client.Config
		want     string // "" = no warning
	}{
		{"http://coordinator.internal:8080", basic, "username and password, Base64-encoded"},
		{"HTTP://10.0.0.5:8080/coord/v1", basic, `to "10.0.0.5"`},
		{"http://coordinator.internal", client.Config{Token: "t"}, "the token, in every request's Authorization: Bearer header"},
		{"http://coordinator.internal", client.Config{Username: "ci", Password: "pw", Login: true}, "the password, in the body of the login request"},
		{"http://[fe80::1]:8080", basic, `to "fe80::1"`},
		{"http://localhost:8080", basic, ""},
		{"http://LOCALHOST.:8080", basic, ""},
		{"http://coord.localhost:8080", basic, ""},
		{"http://127.0.0.1:8080", basic, ""},
		{"http://127.8.9.10:8080", basic, ""},
		{"http://[::1]:8080", basic, ""},
		{"https://coordinator.internal:8080", basic, ""},
		{"http://coordinator.internal:8080", client.Config{}, ""}, // no credentials travel
	} {
		cfg := tc.cfg
		cfg.Endpoint = tc.endpoint
		got := plainHTTPWarning(cfg)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s (%s): %q, want it to contain %q", tc.endpoint, authMode(cfg), got, tc.want)
		}
		if got != "" && (strings.Contains(got, "pw") || !strings.Contains(got, "clear text") || !strings.Contains(got, "Use an https:// endpoint")) {
			t.Errorf("%s: %q", tc.endpoint, got)
		}
	}
}

// TestAccProvider_plainHTTPToAnotherHostWarns (issue 42 §5): credentials
// over plain http:// to a host that is not loopback get a warning saying
// what travels in clear text; the same coordinator reached over loopback
// gets none. The host name is dialled on loopback by the test's transport,
// so nothing leaves the machine and no name is resolved.
func TestAccProvider_plainHTTPToAnotherHostWarns(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	a.env.RequireInRepo(t, "is reached under a host name the test's transport dials on loopback")
	u, err := url.Parse(a.env.Endpoint)
	if err != nil || u.Scheme != "http" {
		t.Fatalf("the in-repo coordinator's endpoint %q is not plain http: %v", a.env.Endpoint, err)
	}
	addr := u.Host
	onLoopback := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	factories := a.diags.Factories(TypeName, NewProtocol6(&coordinatorProvider{version: "test", httpTransport: onLoopback}))
	p := acctest.RandomName("plainhttp")
	dsCreateGroup(t, a.env, p, "svc", 2)
	remote := strings.Replace(a.env.ProviderConfig(), a.env.Endpoint, "http://coordinator.example.test:"+u.Port(), 1)
	read := statecheck.ExpectKnownValue("data.redisstreamcoordinator_group.this", tfjsonpath.New("shard_count"), knownvalue.Int64Exact(2))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				Config:            remote + groupDataSourceConfig(p, "svc"),
				ConfigStateChecks: []statecheck.StateCheck{read},
				Check: a.diags.ExpectWarning("Credentials sent in clear text", `plain http:// to "coordinator.example.test"`,
					"username and password, Base64-encoded (not encrypted) in every request's Authorization: Basic header", "Use an https:// endpoint"),
			},
			{
				PreConfig:         a.diags.Reset,
				Config:            a.env.ProviderConfig() + groupDataSourceConfig(p, "svc"),
				ConfigStateChecks: []statecheck.StateCheck{read},
				Check:             a.diags.ExpectNoWarning("clear text"),
			},
		},
	})
}
