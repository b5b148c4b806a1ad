package labsvc_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/testenv"
)

// TestSquid runs the real squid as a forward proxy and asks it for
// tunnels with Go's own client, the runtime's: open, authenticated,
// refused by ACL, to a dead destination, and intercepted.
func TestSquid(t *testing.T) {
	if why := labsvc.SquidAvailable(true); why != "" {
		testenv.Unavailable(t, why)
	}
	ca, err := labsvc.NewCA("pullpath lab CA")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue(labsvc.LeafOptions{DNSNames: []string{"registry.proxy.test"}})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := leaf.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	target := "https://registry.proxy.test:" + port + "/v2/"
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := ca.WriteCAFile(caFile); err != nil {
		t.Fatal(err)
	}
	hosts := map[string]string{"registry.proxy.test": "127.0.0.1", "dead.proxy.test": "127.0.0.1"}

	get := func(t *testing.T, proxy string, trust *tls.Config, u string) (*http.Response, error) {
		pu, _ := url.Parse(proxy)
		c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: trust}}
		return c.Get(u)
	}
	trustLab := &tls.Config{RootCAs: ca.Pool()}

	start := func(t *testing.T, cfg labsvc.SquidConfig) *labsvc.Squid {
		cfg.Listen, cfg.Hosts = "127.0.0.61:0", hosts
		sq, err := labsvc.StartSquid(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("squid's log:\n%s", sq.Log())
			}
			sq.Close()
		})
		return sq
	}

	t.Run("tunnel", func(t *testing.T) {
		sq := start(t, labsvc.SquidConfig{})
		resp, err := get(t, "http://"+sq.Addr, trustLab, target)
		if err != nil {
			t.Fatalf("GET through squid: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET through squid: %s", resp.Status)
		}
		waitLog(t, sq, "TCP_TUNNEL/200")
	})
	t.Run("auth", func(t *testing.T) {
		sq := start(t, labsvc.SquidConfig{Users: map[string]string{"puller": "proxy-pass-1"}})
		_, err := get(t, "http://"+sq.Addr, trustLab, target)
		if err == nil || !strings.HasSuffix(err.Error(), "Proxy Authentication Required") {
			t.Errorf("without credentials: %v, want Go's error ending in Proxy Authentication Required", err)
		}
		resp, err := get(t, "http://puller:proxy-pass-1@"+sq.Addr, trustLab, target)
		if err != nil {
			t.Fatalf("with credentials: %v", err)
		}
		resp.Body.Close()
	})
	t.Run("deny", func(t *testing.T) {
		sq := start(t, labsvc.SquidConfig{Deny: []string{".proxy.test"}})
		_, err := get(t, "http://"+sq.Addr, trustLab, target)
		if err == nil || !strings.HasSuffix(err.Error(), ": Forbidden") {
			t.Errorf("denied destination: %v, want Go's error ending in Forbidden", err)
		}
		waitLog(t, sq, "TCP_DENIED/403")
	})
	t.Run("dead-destination", func(t *testing.T) {
		sq := start(t, labsvc.SquidConfig{})
		_, err := get(t, "http://"+sq.Addr, trustLab, "https://dead.proxy.test:1/")
		if err == nil || !strings.HasSuffix(err.Error(), "Service Unavailable") {
			t.Errorf("dead destination: %v, want Go's error ending in Service Unavailable", err)
		}
	})
	t.Run("intercept", func(t *testing.T) {
		bump, err := labsvc.NewCA("pullpath lab Squid inspection CA")
		if err != nil {
			t.Fatal(err)
		}
		sq := start(t, labsvc.SquidConfig{Intercept: bump, UpstreamCAFile: caFile})
		_, err = get(t, "http://"+sq.Addr, trustLab, target)
		if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
			t.Errorf("bumped, untrusted: %v, want unknown authority", err)
		}
		var issuer string
		trustBump := &tls.Config{RootCAs: bump.Pool(), VerifyConnection: func(cs tls.ConnectionState) error {
			issuer = cs.PeerCertificates[0].Issuer.CommonName
			return nil
		}}
		resp, err := get(t, "http://"+sq.Addr, trustBump, target)
		if err != nil {
			t.Fatalf("bumped, trusted: %v", err)
		}
		resp.Body.Close()
		if issuer != "pullpath lab Squid inspection CA" {
			t.Errorf("bumped certificate issued by %q, want the inspection CA", issuer)
		}
	})
	// Two intercepting squids at once (parallel tests, two lab hosts):
	// each keeps a TLS session cache in shared memory named after its
	// service name; with one name for both, the one that stops removes
	// the other's segments and the next to start maps a live one's.
	t.Run("two-intercepting", func(t *testing.T) {
		bump, err := labsvc.NewCA("pullpath lab Squid inspection CA")
		if err != nil {
			t.Fatal(err)
		}
		cfg := labsvc.SquidConfig{Intercept: bump, UpstreamCAFile: caFile}
		first, second := start(t, cfg), start(t, cfg)
		seg := func(sq *labsvc.Squid) string { return "/dev/shm/" + sq.Service + "-tls_session_cache.shm" }
		if seg(first) == seg(second) {
			t.Fatalf("both squids use %s", seg(first))
		}
		for _, sq := range []*labsvc.Squid{first, second} {
			if _, err := os.Stat(seg(sq)); err != nil {
				t.Fatalf("squid %s: its session cache segment: %v", sq.Addr, err)
			}
		}
		second.Close()
		if _, err := os.Stat(seg(first)); err != nil {
			t.Fatalf("after the other squid stopped, %s: %v", seg(first), err)
		}
		resp, err := get(t, "http://"+first.Addr, &tls.Config{RootCAs: bump.Pool()}, target)
		if err != nil {
			t.Fatalf("bumped through the first squid after the second stopped: %v", err)
		}
		resp.Body.Close()
	})
}

// waitLog waits (bounded) for squid's access log to show want: squid
// writes the line when the exchange ends.
func waitLog(t *testing.T, sq *labsvc.Squid, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		log, _ := sq.AccessLog()
		if strings.Contains(log, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("squid's access log has no %q within 10s:\n%s", want, log)
		}
		<-tick.C
	}
}
