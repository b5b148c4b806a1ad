package controlplane

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"testing"
)

// TestWriteCredentials checks that the serving certificate verifies for the
// names a client dials, against the CA put in the kubeconfig, and that the
// token file grants system:masters to the generated token.
func TestWriteCredentials(t *testing.T) {
	c, err := writeCredentials(t.TempDir())
	if err != nil {
		t.Fatalf("writeCredentials = %v", err)
	}
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		t.Fatalf("LoadX509KeyPair(%s) = %v", c.certFile, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatalf("ParseCertificate = %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.caPEM) {
		t.Fatalf("CA PEM holds no certificate")
	}
	for _, name := range []string{"127.0.0.1", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool}); err != nil {
			t.Errorf("serving cert Verify(%q) = %v, want ok", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "10.0.0.1", Roots: pool}); err == nil {
		t.Errorf("serving cert Verify(%q) = nil, want an error (loopback names only)", "10.0.0.1")
	}
	for _, f := range []string{c.saKeyFile, c.saPubFile} {
		if b, err := os.ReadFile(f); err != nil || !strings.Contains(string(b), "-----BEGIN ") {
			t.Errorf("service-account key file %s: err=%v, want a PEM block", f, err)
		}
	}
	tokens, err := os.ReadFile(c.tokensFile)
	if err != nil {
		t.Fatalf("read token file: %v", err)
	}
	if want := c.token + `,admin,admin-uid,"system:masters"` + "\n"; string(tokens) != want || len(c.token) < 32 {
		t.Errorf("token file does not hold the generated %d-char token in system:masters", len(c.token))
	}
}
