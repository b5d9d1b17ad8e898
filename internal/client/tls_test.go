package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func newTLSCoordinator(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]string{"status": "UP", "coordinatorId": "local-coordinator", "redis": "NOT_CONFIGURED", "loop": "UP"})
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // rejected handshakes are the point of some tests
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	return srv, caPEM
}

func TestTLSWithCustomCA(t *testing.T) {
	srv, caPEM := newTLSCoordinator(t)
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.CACertPEM = caPEM })
	h, err := c.Health(context.Background())
	if err != nil {
		t.Fatalf("Health: %v", err)
	}
	if h.Status != "UP" || h.Redis != "NOT_CONFIGURED" {
		t.Errorf("health %+v", h)
	}
}

func TestTLSWrongCAFailsWithoutRetry(t *testing.T) {
	srv, _ := newTLSCoordinator(t)
	otherCA := selfSignedCAPEM(t) // httptest servers all share one certificate, so mint another

	for name, mod := range map[string]func(*Config){
		"wrong CA":  func(cfg *Config) { cfg.CACertPEM = otherCA },
		"system CA": nil,
	} {
		c := newTestClient(t, srv.URL, mod)
		_, err := c.Health(context.Background())
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("%s: want a certificate error, got %v", name, err)
		}
		if IsTransient(err) {
			t.Errorf("%s: a certificate error must not be transient", name)
		}
		if !strings.Contains(err.Error(), "1 attempt(s)") {
			t.Errorf("%s: certificate errors must not be retried: %v", name, err)
		}
	}
}

func TestTLSInsecureSkipVerify(t *testing.T) {
	srv, _ := newTLSCoordinator(t)
	c := newTestClient(t, srv.URL, func(cfg *Config) { cfg.InsecureSkipVerify = true })
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatalf("Health: %v", err)
	}
}

func selfSignedCAPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "other test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
