//go:build !fuzzonly

package runtimecfg

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
)

type testPKI struct {
	dir                   string
	caFile, otherCAFile   string
	clientCert, clientKey string
	combined              string
	serverCert            tls.Certificate
	clientPool            *x509.CertPool
	notPEM                string
}

// makePKI writes a lab CA (internal/labsvc's PKI), another CA, a client
// pair signed by the lab CA and a file that is not PEM.
func makePKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, b ...[]byte) string {
		p := filepath.Join(dir, name)
		var all []byte
		for _, x := range b {
			all = append(all, x...)
		}
		if err := os.WriteFile(p, all, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca, err := labsvc.NewCA("lab CA")
	if err != nil {
		t.Fatal(err)
	}
	other, err := labsvc.NewCA("other CA")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ca.Issue(labsvc.LeafOptions{DNSNames: []string{"reg.lab.test"}})
	if err != nil {
		t.Fatal(err)
	}
	cli, err := ca.Issue(labsvc.LeafOptions{DNSNames: []string{"node"}})
	if err != nil {
		t.Fatal(err)
	}
	serverCert, err := srv.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	return testPKI{
		dir: dir, caFile: write("ca.crt", ca.CertPEM), otherCAFile: write("other.crt", other.CertPEM),
		clientCert: write("client.cert", cli.CertPEM), clientKey: write("client.key", cli.KeyPEM), combined: write("combined.pem", cli.CertPEM, cli.KeyPEM),
		serverCert: serverCert, clientPool: ca.Pool(), notPEM: write("garbage.crt", []byte("this is not a certificate\n")),
	}
}

// serveTLS accepts TLS connections on loopback, requiring a client
// certificate when requireClient, and writes "ok" after each handshake.
func serveTLS(t *testing.T, p testPKI, requireClient bool) string {
	t.Helper()
	cfg := &tls.Config{Certificates: []tls.Certificate{p.serverCert}, ClientCAs: p.clientPool}
	if requireClient {
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				if err := c.(*tls.Conn).Handshake(); err == nil {
					_, _ = c.Write([]byte("ok"))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func handshake(addr string, cfg *tls.Config) error {
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 2)
	if _, err := io.ReadFull(c, buf); err != nil {
		return err
	}
	if string(buf) != "ok" {
		return errors.New("unexpected reply " + string(buf))
	}
	return nil
}

func TestTLSConfigHandshake(t *testing.T) {
	p := makePKI(t)
	plain := serveTLS(t, p, false)
	mtls := serveTLS(t, p, true)
	tests := []struct {
		name    string
		host    RegistryHost
		extra   []string
		addr    string
		wantErr string // "" for a good handshake
	}{
		{"hosts.toml CA", RegistryHost{Host: "reg.lab.test:5443", CAFiles: []string{p.caFile}}, nil, plain, ""},
		{"extra CA (--registry-ca)", RegistryHost{Host: "reg.lab.test"}, []string{p.caFile}, plain, ""},
		{"wrong CA only", RegistryHost{Host: "reg.lab.test", CAFiles: []string{p.otherCAFile}}, nil, plain, "certificate signed by unknown authority"},
		{"system roots only", RegistryHost{Host: "reg.lab.test"}, nil, plain, "certificate signed by unknown authority"},
		{"name mismatch", RegistryHost{Host: "other.lab.test", CAFiles: []string{p.caFile}}, nil, plain, "not other.lab.test"},
		{"skip_verify", RegistryHost{Host: "other.lab.test", SkipVerify: true}, nil, plain, ""},
		{"client pair, separate key", RegistryHost{Host: "reg.lab.test", CAFiles: []string{p.caFile}, ClientPairs: [][2]string{{p.clientCert, p.clientKey}}}, nil, mtls, ""},
		{"client pair, combined file", RegistryHost{Host: "reg.lab.test", CAFiles: []string{p.caFile}, ClientPairs: [][2]string{{p.combined, ""}}}, nil, mtls, ""},
		{"no client certificate", RegistryHost{Host: "reg.lab.test", CAFiles: []string{p.caFile}}, nil, mtls, "certificate required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := tt.host.TLSConfig(tt.extra)
			if err != nil {
				t.Fatalf("TLSConfig(%v) error = %v", tt.extra, err)
			}
			err = handshake(tt.addr, cfg)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("handshake with %+v = %v, want success", tt.host, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("handshake with %+v = %v, want error containing %q", tt.host, err, tt.wantErr)
			}
		})
	}
}

func TestTLSConfigErrors(t *testing.T) {
	p := makePKI(t)
	missing := filepath.Join(p.dir, "missing.crt")
	tests := []struct {
		name string
		host RegistryHost
		want string
	}{
		{"missing CA", RegistryHost{Host: "r", CAFiles: []string{missing}}, "CA file " + missing + ": no such file"},
		{"not PEM", RegistryHost{Host: "r", CAFiles: []string{p.notPEM}}, "CA file " + p.notPEM + ": no PEM certificate"},
		{"missing client cert", RegistryHost{Host: "r", ClientPairs: [][2]string{{missing, ""}}}, "client certificate " + missing},
		{"missing client key", RegistryHost{Host: "r", ClientPairs: [][2]string{{p.clientCert, missing}}}, "client key " + missing},
		{"cert without key", RegistryHost{Host: "r", ClientPairs: [][2]string{{p.clientCert, ""}}}, "client pair " + p.clientCert},
		{"key does not match", RegistryHost{Host: "r", ClientPairs: [][2]string{{p.caFile, p.clientKey}}}, "client pair " + p.caFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := tt.host.TLSConfig(nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("TLSConfig() = %v, %v; want error containing %q", cfg, err, tt.want)
			}
			keyPEM, _ := os.ReadFile(p.clientKey)
			if strings.Contains(err.Error(), strings.Split(string(keyPEM), "\n")[1]) {
				t.Errorf("TLSConfig() error %q shows key material", err)
			}
		})
	}
}

func TestTLSConfigFields(t *testing.T) {
	cfg, err := RegistryHost{Host: "[::1]:5443", SkipVerify: true}.TLSConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ServerName != "::1" || !cfg.InsecureSkipVerify || cfg.RootCAs != nil {
		t.Errorf("TLSConfig() = {ServerName %q, InsecureSkipVerify %v, RootCAs %v}, want {::1, true, nil (system)}", cfg.ServerName, cfg.InsecureSkipVerify, cfg.RootCAs)
	}
}
