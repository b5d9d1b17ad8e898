package provider

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// plainHTTPWarning exempts loopback, where plain http is expected. The host is
// judged by name, never resolved: configuring sends nothing.
func plainHTTPWarning(cfg client.Config) string {
	u, err := url.Parse(strings.TrimSpace(cfg.Endpoint))
	if err != nil || !strings.EqualFold(u.Scheme, "http") || isLoopbackHost(u.Hostname()) {
		return ""
	}
	var secrets string
	switch authMode(cfg) {
	case "bearer":
		secrets = "the token, in every request's Authorization: Bearer header"
	case "login":
		secrets = "the password, in the body of the login request (POST /coord/v1/auth/login), and the Bearer token the " +
			"coordinator issues for it, in every later request's Authorization header"
	case "basic":
		secrets = "the username and password, Base64-encoded (not encrypted) in every request's Authorization: Basic header"
	default:
		return ""
	}
	return fmt.Sprintf("The endpoint %s uses plain http:// to %q, which is not a loopback address, so %s travel in clear text, "+
		"with every request's requestedBy and reason and the coordinator's answers: anyone on the network path can read them, "+
		"and reuse the credentials. Use an https:// endpoint (ca_cert_pem trusts a private CA). Plain http:// gets no warning only "+
		"for a coordinator on this machine (localhost, 127.0.0.1 or ::1).", client.RedactEndpoint(cfg.Endpoint), u.Hostname(), secrets)
}

func isLoopbackHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
