package client

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ConnectionErrorKind says why the coordinator could not be reached.
type ConnectionErrorKind string

// Kinds of ConnectionError. Only ConnectionRefused and ConnectionNetwork are
// retried, within the client's connection budget (DefaultConnectRetryBudget):
// long enough to ride out a coordinator restart, short enough that a wrong
// endpoint fails in seconds. The others are retried not at all.
const (
	// ConnectionRefused: nothing accepted the TCP connection (wrong port,
	// coordinator down or restarting).
	ConnectionRefused ConnectionErrorKind = "connection refused"
	// ConnectionNetwork: another connect-time failure (no route to host,
	// network unreachable, a temporary DNS failure).
	ConnectionNetwork ConnectionErrorKind = "network unreachable"
	// ConnectionDNS: the host name does not exist.
	ConnectionDNS ConnectionErrorKind = "unknown host"
	// ConnectionTimeout: the TCP connect was not answered in time (a
	// firewall dropping packets, or a wrong address).
	ConnectionTimeout ConnectionErrorKind = "connect timeout"
	// ConnectionHTTPSToHTTP: an https:// endpoint whose server speaks plain
	// HTTP.
	ConnectionHTTPSToHTTP ConnectionErrorKind = "https endpoint, plain-HTTP server"
	// ConnectionHTTPToHTTPS: an http:// endpoint whose server speaks TLS.
	ConnectionHTTPToHTTPS ConnectionErrorKind = "http endpoint, TLS server"
	// ConnectionCertificate: the server's TLS certificate was rejected.
	ConnectionCertificate ConnectionErrorKind = "certificate rejected"
)

// ConnectionError means the request never reached the coordinator's API: it
// could not connect, or could not agree on the protocol. It is never
// ambiguous (nothing can have been applied), and its message says the cause
// and what to change.
type ConnectionError struct {
	Kind      ConnectionErrorKind
	Endpoint  string // scheme://host[:port]
	Method    string
	Path      string
	RequestID string
	Attempts  int
	Elapsed   time.Duration // from the first attempt to the last failure
	Err       error
}

func (e *ConnectionError) Error() string {
	return fmt.Sprintf("%s %s: cannot reach the coordinator at %s: %s (request id %s, %d attempt(s) in %s): %v. %s",
		e.Method, e.Path, e.Endpoint, e.Kind, e.RequestID, e.Attempts, formatSeconds(e.Elapsed), e.Err, e.Fix())
}

func (e *ConnectionError) Unwrap() error { return e.Err }

// Fix says what the user can change.
func (e *ConnectionError) Fix() string {
	host := e.Endpoint
	if u, err := url.Parse(e.Endpoint); err == nil && u.Host != "" {
		host = u.Host
	}
	switch e.Kind {
	case ConnectionRefused:
		return fmt.Sprintf("Nothing accepted a connection at %s: check the endpoint's host and port, and that the coordinator "+
			"is running. Refused connections are retried only briefly, to ride out a restart.", host)
	case ConnectionNetwork:
		return fmt.Sprintf("The network path to %s failed: check the endpoint, DNS and the network between Terraform and the "+
			"coordinator.", host)
	case ConnectionDNS:
		return fmt.Sprintf("The host name in %s does not resolve: check the endpoint's spelling and DNS.", host)
	case ConnectionTimeout:
		return fmt.Sprintf("The TCP connect to %s was not answered: check the endpoint's address and port, and firewalls "+
			"or security groups in between.", host)
	case ConnectionHTTPSToHTTP:
		return "The endpoint uses https://, but the server answered in plain HTTP: use an http:// endpoint, or enable TLS " +
			"on the coordinator (or the proxy in front of it)."
	case ConnectionHTTPToHTTPS:
		return "The endpoint uses http://, but the server speaks TLS: use an https:// endpoint."
	case ConnectionCertificate:
		return "The server's TLS certificate was not accepted: set ca_cert_pem to the CA that signed it, make sure the " +
			"endpoint's host name is one the certificate names, or (for testing only) set insecure_skip_verify = true."
	}
	return ""
}

// IsUnreachable reports whether err is a ConnectionError: the coordinator
// could not be reached at all, so nothing was applied.
func IsUnreachable(err error) bool {
	var ce *ConnectionError
	return errors.As(err, &ce)
}

// UnreachableKind returns the ConnectionErrorKind in err's chain, or "".
func UnreachableKind(err error) ConnectionErrorKind {
	var ce *ConnectionError
	if errors.As(err, &ce) {
		return ce.Kind
	}
	return ""
}

// connectionFailure classifies a transport error that happened before the
// request reached the coordinator. ok is false for failures after the
// connection was made (resets, EOF, timeouts while waiting for an answer),
// which may have reached it. retry says whether the connection budget may
// retry it.
func connectionFailure(err error) (kind ConnectionErrorKind, retry, ok bool) {
	var (
		verifyErr        *tls.CertificateVerificationError
		unknownAuthority x509.UnknownAuthorityError
		hostnameErr      x509.HostnameError
		invalidCert      x509.CertificateInvalidError
		recordErr        tls.RecordHeaderError
		dnsErr           *net.DNSError
	)
	switch {
	case errors.As(err, &verifyErr), errors.As(err, &unknownAuthority),
		errors.As(err, &hostnameErr), errors.As(err, &invalidCert):
		return ConnectionCertificate, false, true
	case errors.Is(err, http.ErrSchemeMismatch), errors.As(err, &recordErr):
		return ConnectionHTTPSToHTTP, false, true
	case isTLSResponseToHTTP(err):
		return ConnectionHTTPToHTTPS, false, true
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return ConnectionDNS, false, true
		}
		return ConnectionNetwork, true, true
	}
	if !isDialError(err) {
		return "", false, false
	}
	var netErr net.Error
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		return ConnectionTimeout, false, true
	case isRefused(err):
		return ConnectionRefused, true, true
	}
	return ConnectionNetwork, true, true
}

// isTLSResponseToHTTP reports a plain-HTTP client reading a TLS record (an
// alert or handshake) where it expected a status line: net/http says
// `malformed HTTP response "\x15\x03\x01..."`.
func isTLSResponseToHTTP(err error) bool {
	msg := err.Error()
	i := strings.Index(msg, "malformed HTTP response ")
	if i < 0 {
		return false
	}
	rest := msg[i+len("malformed HTTP response "):]
	return strings.HasPrefix(rest, `"\x15\x03`) || strings.HasPrefix(rest, `"\x16\x03`)
}

// plainHTTPToTLSServer recognises Go's (and several proxies') answer to
// plain HTTP on a TLS port: 400 "Client sent an HTTP request to an HTTPS
// server." (nginx: "The plain HTTP request was sent to HTTPS port").
func plainHTTPToTLSServer(status int, body []byte) bool {
	if status != http.StatusBadRequest {
		return false
	}
	return bytes.Contains(body, []byte("HTTP request to an HTTPS server")) ||
		bytes.Contains(body, []byte("plain HTTP request was sent to HTTPS port"))
}
