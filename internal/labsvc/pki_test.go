package labsvc

import (
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestIssueVerify(t *testing.T) {
	t.Parallel()
	ca, err := NewCA("")
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	other, err := NewCA("other")
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	now := time.Now()
	tests := []struct {
		name    string
		ca      *CA
		opts    LeafOptions
		verify  string // DNS name to verify
		wantErr string // substring of the x509 error; "" means valid
	}{
		{"valid-name", ca, LeafOptions{DNSNames: []string{"registry.lab.test"}}, "registry.lab.test", ""},
		{"valid-ip", ca, LeafOptions{IPs: []net.IP{net.ParseIP("127.0.0.10")}}, "127.0.0.10", ""},
		{"invalid-untrusted-ca", other, LeafOptions{DNSNames: []string{"registry.lab.test"}}, "registry.lab.test", "unknown authority"},
		{"invalid-wrong-name", ca, LeafOptions{DNSNames: []string{"wrong.lab.test"}}, "registry.lab.test", "not registry.lab.test"},
		{"invalid-expired", ca, LeafOptions{DNSNames: []string{"registry.lab.test"}, NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(-time.Hour)}, "registry.lab.test", "expired"},
		{"invalid-not-yet-valid", ca, LeafOptions{DNSNames: []string{"registry.lab.test"}, NotBefore: now.Add(time.Hour), NotAfter: now.Add(48 * time.Hour)}, "registry.lab.test", "not yet valid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leaf, err := tt.ca.Issue(tt.opts)
			if err != nil {
				t.Fatalf("Issue(%+v): %v", tt.opts, err)
			}
			if _, err := leaf.TLSCertificate(); err != nil {
				t.Fatalf("TLSCertificate: %v", err)
			}
			_, err = leaf.Cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: tt.verify})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Verify(%q) = %v, want valid", tt.verify, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Verify(%q) = %v, want error containing %q", tt.verify, err, tt.wantErr)
			}
		})
	}
}

func TestIssueRejectsBadOptions(t *testing.T) {
	t.Parallel()
	ca, err := NewCA("")
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	now := time.Now()
	for name, opts := range map[string]LeafOptions{
		"invalid-no-names":        {},
		"invalid-inverted-period": {DNSNames: []string{"a.lab.test"}, NotBefore: now, NotAfter: now.Add(-time.Hour)},
	} {
		if _, err := ca.Issue(opts); err == nil {
			t.Errorf("Issue(%s) = nil error, want an error", name)
		}
	}
}

func TestWriteCAFile(t *testing.T) {
	t.Parallel()
	ca, err := NewCA("")
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	p := filepath.Join(t.TempDir(), "sub", "ca.crt")
	if err := ca.WriteCAFile(p); err != nil {
		t.Fatalf("WriteCAFile(%q): %v", p, err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("WriteCAFile(%q) wrote %q, want a PEM certificate", p, b)
	}
	leaf, err := ca.Issue(LeafOptions{DNSNames: []string{"x.lab.test"}})
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	if _, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "x.lab.test"}); err != nil {
		t.Errorf("leaf does not verify against the written CA file: %v", err)
	}
}

func TestCAFilesRoundTrip(t *testing.T) {
	t.Parallel()
	ca, err := NewCA("")
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	dir := t.TempDir()
	cp, kp := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	if err := ca.WriteFiles(cp, kp); err != nil {
		t.Fatalf("WriteFiles: %v", err)
	}
	back, err := LoadCA(cp, kp)
	if err != nil {
		t.Fatalf("LoadCA(%q, %q): %v", cp, kp, err)
	}
	leaf, err := back.Issue(LeafOptions{DNSNames: []string{"y.lab.test"}})
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	if _, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "y.lab.test"}); err != nil {
		t.Errorf("leaf from the loaded CA does not verify against the original: %v", err)
	}
	other, _ := NewCA("other")
	op := filepath.Join(dir, "other.key")
	if err := other.WriteFiles(filepath.Join(dir, "other.crt"), op); err != nil {
		t.Fatalf("WriteFiles: %v", err)
	}
	if _, err := LoadCA(cp, op); err == nil {
		t.Errorf("LoadCA with a key of another CA = nil error, want a mismatch error")
	}
}
