//go:build !fuzzonly

package netcheck

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/verdict"
)

// testCA is a certificate authority made for one test (the lab's PKI).
type testCA struct{ *labsvc.CA }

func newCA(t *testing.T, name string) *testCA {
	t.Helper()
	ca, err := labsvc.NewCA(name)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{ca}
}

// leaf issues a server certificate for names (DNS names or IP addresses)
// valid from notBefore to notAfter.
func (ca *testCA) leaf(t *testing.T, notBefore, notAfter time.Time, names ...string) tls.Certificate {
	t.Helper()
	opts := labsvc.LeafOptions{NotBefore: notBefore, NotAfter: notAfter}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			opts.IPs = append(opts.IPs, ip)
		} else {
			opts.DNSNames = append(opts.DNSNames, n)
		}
	}
	l, err := ca.Issue(opts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func serveTLS(t *testing.T, cert tls.Certificate) string {
	return serve(t, func(c net.Conn) {
		defer c.Close()
		tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
		tc.SetDeadline(time.Now().Add(5 * time.Second))
		tc.Handshake()
	})
}

func TestHandshake(t *testing.T) {
	now := time.Now()
	trusted, untrusted := newCA(t, "pullpath test CA"), newCA(t, "someone else's CA")
	roots := x509.NewCertPool()
	roots.AddCert(trusted.Cert)
	valid := func(ca *testCA, names ...string) tls.Certificate {
		return ca.leaf(t, now.Add(-time.Hour), now.Add(time.Hour), names...)
	}

	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	silent := serve(t, func(c net.Conn) { <-release; c.Close() })
	notTLS := serve(t, func(c net.Conn) {
		c.Read(make([]byte, 512))
		fmt.Fprint(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
		c.Close()
	})

	c := newChecker(t, Config{TLSTimeout: 400 * time.Millisecond})
	tests := []struct {
		name     string
		addr     string
		cfg      *tls.Config
		code     verdict.Code
		verified bool
		sans     []string // nil: no certificate seen
		errHas   string
	}{
		{"trusted", serveTLS(t, valid(trusted, "registry.test", "127.0.0.1")), &tls.Config{RootCAs: roots},
			"", true, []string{"registry.test", "127.0.0.1"}, ""},
		{"unknown authority", serveTLS(t, valid(untrusted, "registry.test")), &tls.Config{RootCAs: roots},
			verdict.TLSUnknownAuthority, false, []string{"registry.test"}, "unknown authority"},
		{"name mismatch", serveTLS(t, valid(trusted, "other.test", "www.other.test")), &tls.Config{RootCAs: roots},
			verdict.TLSNameMismatch, false, []string{"other.test", "www.other.test"},
			`certificate is not valid for "registry.test": it is valid for other.test, www.other.test`},
		{"expired", serveTLS(t, trusted.leaf(t, now.Add(-48*time.Hour), now.Add(-24*time.Hour), "registry.test")), &tls.Config{RootCAs: roots},
			verdict.TLSExpired, false, []string{"registry.test"}, "expired"},
		{"not yet valid", serveTLS(t, trusted.leaf(t, now.Add(time.Hour), now.Add(48*time.Hour), "registry.test")), &tls.Config{RootCAs: roots},
			verdict.TLSNotYetValid, false, []string{"registry.test"}, "not yet valid"},
		{"skip verify", serveTLS(t, valid(untrusted, "registry.test")), &tls.Config{InsecureSkipVerify: true},
			"", false, []string{"registry.test"}, ""},
		{"custom verifier: second handshake shows the certificate", serveTLS(t, valid(trusted, "registry.test")),
			&tls.Config{RootCAs: roots, VerifyPeerCertificate: func([][]byte, [][]*x509.Certificate) error {
				return x509.UnknownAuthorityError{}
			}},
			verdict.TLSUnknownAuthority, false, []string{"registry.test"}, ""},
		{"not TLS", notTLS, &tls.Config{RootCAs: roots}, verdict.TLSHandshakeFailed, false, nil, "does not look like a TLS handshake"},
		{"never handshakes", silent, &tls.Config{RootCAs: roots}, verdict.TLSHandshakeTimeout, false, nil, "did not finish within 400ms"},
		{"closed port", "127.0.0.1:" + fmt.Sprint(closedPort(t)), nil, verdict.ConnectRefused, false, nil, "refused"},
		{"not IP:PORT", "registry.test:443", nil, verdict.ConnectError, false, nil, "want IP:PORT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			got := c.Handshake(context.Background(), tt.addr, "registry.test", tt.cfg)
			if elapsed := time.Since(start); elapsed > time.Second {
				t.Errorf("Handshake(%s) took %v, want it bounded by TLSTimeout 400ms", tt.addr, elapsed)
			}
			if got.Code != tt.code || got.Verified != tt.verified {
				t.Errorf("Handshake(%s) = code %q verified %v (%s), want code %q verified %v", tt.addr, got.Code, got.Verified, got.Error, tt.code, tt.verified)
			}
			if got.ServerName != "registry.test" || got.SkipVerify != (tt.cfg != nil && tt.cfg.InsecureSkipVerify) {
				t.Errorf("Handshake(%s) = serverName %q skipVerify %v", tt.addr, got.ServerName, got.SkipVerify)
			}
			if d := cmp.Diff(tt.sans, got.SANs); d != "" {
				t.Errorf("Handshake(%s).SANs mismatch (-want +got):\n%s", tt.addr, d)
			}
			if tt.sans != nil {
				if !strings.HasPrefix(got.Subject, "CN=") || !strings.HasPrefix(got.Issuer, "CN=") || got.NotBefore == nil || got.NotAfter == nil || got.Version == "" {
					t.Errorf("Handshake(%s) = %+v, want subject, issuer, validity and version", tt.addr, got)
				}
			}
			if !strings.Contains(got.Error, tt.errHas) || (tt.code == "") != (got.Error == "") {
				t.Errorf("Handshake(%s).Error = %q, want it to contain %q", tt.addr, got.Error, tt.errHas)
			}
		})
	}
}

func TestClassifyTLSError(t *testing.T) {
	future := &x509.Certificate{NotBefore: time.Now().Add(time.Hour), NotAfter: time.Now().Add(2 * time.Hour)}
	past := &x509.Certificate{NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: time.Now().Add(-time.Hour)}
	wrap := func(err error) error {
		return &url.Error{Op: "Get", URL: "https://r.example/v2/", Err: &tls.CertificateVerificationError{Err: err}}
	}
	tests := []struct {
		name string
		err  error
		want verdict.Code
	}{
		{"nil", nil, ""},
		{"unknown authority", wrap(x509.UnknownAuthorityError{}), verdict.TLSUnknownAuthority},
		{"name mismatch", wrap(x509.HostnameError{Certificate: past, Host: "r.example"}), verdict.TLSNameMismatch},
		{"expired", wrap(x509.CertificateInvalidError{Cert: past, Reason: x509.Expired}), verdict.TLSExpired},
		{"not yet valid", wrap(x509.CertificateInvalidError{Cert: future, Reason: x509.Expired}), verdict.TLSNotYetValid},
		{"other invalid", wrap(x509.CertificateInvalidError{Cert: past, Reason: x509.NotAuthorizedToSign}), verdict.TLSHandshakeFailed},
		{"timeout", fmt.Errorf("handshake: %w", context.DeadlineExceeded), verdict.TLSHandshakeTimeout},
		{"net timeout", &net.OpError{Op: "read", Err: timeoutErr{}}, verdict.TLSHandshakeTimeout},
		{"record header", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, verdict.TLSHandshakeFailed},
		{"alert", errors.New("remote error: tls: handshake failure"), verdict.TLSHandshakeFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClassifyTLSError(tt.err); got != tt.want {
				t.Errorf("ClassifyTLSError(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}
