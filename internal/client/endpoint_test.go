package client

import (
	"strings"
	"testing"
)

func TestRedactEndpoint(t *testing.T) {
	cases := map[string]string{
		"https://user:s3cr3t@host:8443":            "https://host:8443",
		"https://user@host:8443/proxy":             "https://host:8443/proxy",
		"https://user:s3/cr3t@host:8443/proxy":     "https://host:8443/proxy", // url.Parse reads "/cr3t@…" as the path
		"https://user:s3?cr3t@host":                "https://host",            // … or "?cr3t@host" as the query
		"https://user:s3#cr3t@host":                "https://host",
		"https://user:p@ss@host":                   "https://host",
		"user:s3cr3t@host:1":                       "host:1",
		"http://127.0.0.1:8080/coord/v1?token=x#f": "http://127.0.0.1:8080/coord/v1",
		"  https://host  ":                         "https://host",
	}
	for in, want := range cases {
		if got := RedactEndpoint(in); got != want {
			t.Errorf("RedactEndpoint(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(in, "@") != EndpointHasUserInfo(in) {
			t.Errorf("EndpointHasUserInfo(%q) = %v", in, EndpointHasUserInfo(in))
		}
	}
}

// An endpoint with user info is refused, and no error of New, whatever else
// is wrong with the endpoint, repeats its password or user name.
func TestNewRefusesUserInfoWithoutRepeatingIt(t *testing.T) {
	for _, endpoint := range []string{
		"https://tfuser:s3cr3t@127.0.0.1:1",
		"https://tfuser:s3cr3t@127.0.0.1:1/coord/v1",
		"https://tfuser@127.0.0.1:1",
		"https://tfuser:s3/cr3t@127.0.0.1:1",
		"https://tfuser:s3cr3t@127.0.0.1:port",
		"ftp://tfuser:s3cr3t@127.0.0.1:1",
		"tfuser:s3cr3t@127.0.0.1:1",
		"https://tfuser:s3%zzcr3t@127.0.0.1:1",
	} {
		_, err := New(Config{Endpoint: endpoint})
		if err == nil {
			t.Errorf("%q: accepted", endpoint)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "contains user info") {
			t.Errorf("%q: %s", endpoint, msg)
		}
		for _, secret := range []string{"s3", "cr3t", "tfuser"} {
			if strings.Contains(msg, secret) {
				t.Errorf("%q: the error repeats %q: %s", endpoint, secret, msg)
			}
		}
	}
}

func TestClientEndpointIsTheBaseURL(t *testing.T) {
	c, err := New(Config{Endpoint: "https://host:8443/proxy/coord/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Endpoint(); got != "https://host:8443/proxy" {
		t.Fatalf("Endpoint() = %q", got)
	}
}
