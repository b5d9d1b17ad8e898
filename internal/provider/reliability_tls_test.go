package provider

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

func TestAccReliability_tlsWithPrivateCA(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "serves the in-repo coordinator over TLS")
	srv := httptest.NewTLSServer(c.Handler())
	t.Cleanup(srv.Close)
	tlsEnv := a.withEndpoint(srv.URL)
	p := acctest.RandomName("tls")
	group := groupHCL("test", p, "svc", "initial_shard_count = 2") + shardCountHCL("scale", p, "svc", 1, "depends_on = [redisstreamcoordinator_group.test]")
	trusting := func(caPEM []byte) string {
		return tlsEnv.ProviderConfig(fmt.Sprintf("ca_cert_pem = <<-EOT\n%sEOT", caPEM)) + group
	}
	serverCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				// The coordinator's CA passed as ca_cert_pem: everything works.
				Config: trusting(serverCA),
				Check:  a.migrationFinished(p, "svc", 1),
			},
			{
				// Another CA: the refresh fails at once (a certificate error
				// is never retried), saying what to set.
				Config: trusting(otherCA(t)),
				ExpectError: diagRe(`Failed to read group "svc" under stream prefix "`+p+`"`, "GET /coord/v1/streams/"+p+"/groups/svc",
					"x509: certificate signed by unknown authority", "1 attempt(s)",
					"not signed by a CA this machine trusts", "set ca_cert_pem"),
			},
			{
				// No CA at all: the same advice.
				Config:      tlsEnv.ProviderConfig() + group,
				ExpectError: diagRe("certificate signed by unknown authority", "set ca_cert_pem"),
			},
			{
				Config: trusting(serverCA),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

// otherCA is a freshly generated CA certificate that signed nothing the
// coordinator serves.
func otherCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(42),
		Subject:               pkix.Name{CommonName: "unrelated test CA"},
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
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
