package monitor

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/testenv"
)

// TestServedByCacheInPrometheus: two agents on one registry, one node whose
// certs.d hosts.toml puts the reference registry's real pull-through cache
// (distribution's proxy.remoteurl) before it, one without: a real
// Prometheus scraping both shows pullpath_served_by naming the cache (role
// mirror) for the first and the registry itself for the second.
func TestServedByCacheInPrometheus(t *testing.T) {
	st := testenv.StartStack(t, labsvc.StackConfig{RegistryTLS: labsvc.TLSNone, Auth: labsvc.AuthNone, NoRedirect: true,
		Addrs: labsvc.StackAddrs{DNS: "127.0.47.53", Registry: "127.0.47.10", Token: "127.0.47.11", Blob: "127.0.47.12", Blob2: "127.0.47.13"}})
	leaf, err := st.CA.Issue(labsvc.LeafOptions{DNSNames: []string{"cache.lab.test"}})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := leaf.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	cache, err := labsvc.StartRegistry(context.Background(), labsvc.RegistryConfig{Addr: "127.0.47.27:0", RootDir: t.TempDir(), Cert: &cert, ProxyRemoteURL: st.Reg.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cache.Close() })
	ip, port, _ := net.SplitHostPort(cache.Addr())
	if err := st.DNS.SetRecords("cache.lab.test", labsvc.DNSRecord{Type: "A", Value: ip}); err != nil {
		t.Fatal(err)
	}
	cacheHost := "cache.lab.test:" + port
	// the registry speaks plain HTTP: each node's hosts.toml says so
	// (server http://...), the first also names the cache
	certsDir := func(toml string) string {
		certs := filepath.Join(t.TempDir(), "certs.d")
		if err := os.MkdirAll(filepath.Join(certs, st.RegistryHost), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(certs, st.RegistryHost, "hosts.toml"), []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
		return certs
	}
	server := fmt.Sprintf("server = %q\n", "http://"+st.RegistryHost)
	withCache := labOptions(t, labNode{name: "node-cache", stack: st})
	withCache.CertsDir = certsDir(server + fmt.Sprintf("\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = %q\n", "https://"+cacheHost, st.Files.CAFile))
	plain := labOptions(t, labNode{name: "node-plain", stack: st})
	plain.CertsDir = certsDir(server)
	a, _ := startAgent(t, withCache)
	b, _ := startAgent(t, plain)
	prom := startPrometheus(t, []string{a.Addr(), b.Addr()}, "")

	want := map[string][2]string{a.Addr(): {cacheHost, "mirror"}, b.Addr(): {st.RegistryHost, "registry"}}
	waitFor(t, 60*time.Second, "pullpath_served_by of both agents in Prometheus", func() (bool, string) {
		res, err := prom.query(`pullpath_served_by == 1`)
		if err != nil {
			return false, err.Error()
		}
		got := map[string][2]string{}
		for _, s := range res {
			if s.Metric["image_host"] != st.RegistryHost {
				return false, "image_host " + s.Metric["image_host"]
			}
			got[s.Metric["instance"]] = [2]string{s.Metric["served_by"], s.Metric["role"]}
		}
		if len(got) != len(want) || got[a.Addr()] != want[a.Addr()] || got[b.Addr()] != want[b.Addr()] {
			return false, fmt.Sprintf("got %v, want %v", got, want)
		}
		return true, ""
	})
}
