//go:build !fuzzonly

package pull

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/printers"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/verdict"
)

// startMirror starts a broken mirror named name.lab.test on addr (TLS from
// the stack's CA) and gives the stack's DNS its record.
func startMirror(t *testing.T, st *labsvc.Stack, name, addr, behaviour string) *labsvc.Mirror {
	t.Helper()
	host := name + ".lab.test"
	leaf, err := st.CA.Issue(labsvc.LeafOptions{DNSNames: []string{host}})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := leaf.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	m, err := labsvc.StartMirror(context.Background(), labsvc.MirrorConfig{
		Addr: addr + ":0", Cert: &cert, Behaviour: behaviour,
		Upstream: st.Reg.URL(), UpstreamTLS: &tls.Config{RootCAs: st.CA.Pool(), ServerName: labsvc.RegistryHostName},
	})
	if err != nil {
		t.Fatalf("StartMirror(%s): %v", behaviour, err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ip, _, _ := net.SplitHostPort(m.Addr())
	if err := st.DNS.SetRecords(host, labsvc.DNSRecord{Type: "A", Value: ip}); err != nil {
		t.Fatal(err)
	}
	return m
}

// writeChain writes the registry's hosts.toml: the mirrors (host:port) in
// order, then the registry as the server, every host trusting the lab CA.
func writeChain(t *testing.T, st *labsvc.Stack, extra string, mirrors ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "certs.d")
	host := st.RegistryHost
	if err := os.MkdirAll(filepath.Join(dir, host), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	scheme := "https://"
	if st.Config.RegistryTLS == labsvc.TLSNone {
		scheme = "http://"
	}
	fmt.Fprintf(&b, "server = %q\nca = %q\n%s\n", scheme+host, st.Files.CAFile, extra)
	for _, m := range mirrors {
		fmt.Fprintf(&b, "\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n  ca = %q\n", "https://"+m, st.Files.CAFile)
	}
	if err := os.WriteFile(filepath.Join(dir, host, "hosts.toml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mirrorHost(m *labsvc.Mirror, name string) string {
	_, port, _ := net.SplitHostPort(m.Addr())
	return name + ".lab.test:" + port
}

func chainRow(t *testing.T, rep *report.ProbeReport, host string) report.ChainHost {
	t.Helper()
	if rep.Chain == nil {
		t.Fatalf("report has no chain; verdict %s: %s", rep.Verdict.Code, rep.Verdict.Summary)
	}
	for _, h := range rep.Chain.Hosts {
		if h.Host == host {
			return h
		}
	}
	t.Fatalf("chain has no row for %s: %+v", host, rep.Chain.Hosts)
	return report.ChainHost{}
}

func TestChainStalledMirror(t *testing.T) {
	var m *labsvc.Mirror
	var mh string
	rep, st := probeStack(t, labsvc.StackConfig{}, func(o *Options, st *labsvc.Stack) {
		m = startMirror(t, st, "hung", "127.0.0.21", labsvc.MirrorHang)
		mh = mirrorHost(m, "hung")
		o.CertsDir = writeChain(t, st, "", mh)
	})
	if rep.Verdict.Code != verdict.MirrorStalled || rep.Verdict.Endpoint != "hung.lab.test" {
		t.Fatalf("verdict = %s at %s (%s), want MIRROR_STALLED at %s", rep.Verdict.Code, rep.Verdict.Endpoint, rep.Verdict.Summary, mh)
	}
	row := chainRow(t, rep, mh)
	if row.Outcome != report.ChainStalled || row.HoldMS != -1 {
		t.Errorf("mirror row = %s hold %v, want stalled, -1", row.Outcome, row.HoldMS)
	}
	up := chainRow(t, rep, st.RegistryHost)
	if up.Outcome != report.ChainServed || rep.Chain.ServedBy.Blobs != st.RegistryHost {
		t.Errorf("registry row = %s, served by %+v: want the registry to serve (the probe goes on past the stall)", up.Outcome, rep.Chain.ServedBy)
	}
	if !strings.Contains(rep.Verdict.Summary, "never gets there") {
		t.Errorf("summary %q does not say containerd never reaches the registry", rep.Verdict.Summary)
	}
	if len(m.Requests()) == 0 {
		t.Errorf("the mirror received no request")
	}
}

func TestChainHeadNotFoundMirror(t *testing.T) {
	var m *labsvc.Mirror
	var mh string
	rep, st := probeStack(t, labsvc.StackConfig{NoRedirect: true}, func(o *Options, st *labsvc.Stack) {
		m = startMirror(t, st, "harbor", "127.0.0.22", labsvc.MirrorHeadNotFound)
		mh = mirrorHost(m, "harbor")
		o.CertsDir = writeChain(t, st, "", mh)
	})
	if rep.Verdict.Code != verdict.OK {
		t.Fatalf("verdict = %s (%s), want OK", rep.Verdict.Code, rep.Verdict.Summary)
	}
	want := report.ServedBy{Resolve: st.RegistryHost, Manifest: mh, Blobs: mh}
	if rep.Chain.ServedBy != want {
		t.Errorf("served by %+v, want %+v (containerd resolves upstream, then fetches from the mirror first)", rep.Chain.ServedBy, want)
	}
	if !hasWarning(rep, verdict.MirrorHeadMismatch) {
		t.Errorf("warnings = %+v, want MIRROR_HEAD_GET_MISMATCH", rep.Warnings)
	}
	var ns bool
	for _, r := range m.Requests() {
		ns = ns || strings.Contains(r, "ns="+st.RegistryHost)
	}
	if !ns {
		t.Errorf("mirror requests %v carry no ns=%s query", m.Requests(), st.RegistryHost)
	}
}

func TestChainHTMLMirror(t *testing.T) {
	var mh string
	rep, _ := probeStack(t, labsvc.StackConfig{}, func(o *Options, st *labsvc.Stack) {
		mh = mirrorHost(startMirror(t, st, "portal", "127.0.0.23", labsvc.MirrorHTML), "portal")
		o.CertsDir = writeChain(t, st, "", mh)
	})
	if rep.Verdict.Code != verdict.MirrorNotRegistry || rep.Verdict.Endpoint != "portal.lab.test" {
		t.Fatalf("verdict = %s at %s (%s), want MIRROR_NOT_REGISTRY at %s", rep.Verdict.Code, rep.Verdict.Endpoint, rep.Verdict.Summary, mh)
	}
}

func TestChainRefusedMirrorCost(t *testing.T) {
	var mh string
	rep, st := probeStack(t, labsvc.StackConfig{}, func(o *Options, st *labsvc.Stack) {
		// a name that resolves to an address where nothing listens
		if err := st.DNS.SetRecords("gone.lab.test", labsvc.DNSRecord{Type: "A", Value: "127.0.0.24"}); err != nil {
			t.Fatal(err)
		}
		mh = "gone.lab.test:5000"
		o.CertsDir = writeChain(t, st, "", mh)
	})
	if rep.Verdict.Code != verdict.OK {
		t.Fatalf("verdict = %s (%s), want OK", rep.Verdict.Code, rep.Verdict.Summary)
	}
	row := chainRow(t, rep, mh)
	if row.Outcome != report.ChainFellThrough || row.Code != verdict.ConnectRefused || row.Tries != rep.Chain.Requests {
		t.Errorf("mirror row = %s %s tries %d, want fell-through CONNECT_REFUSED on all %d requests", row.Outcome, row.Code, row.Tries, rep.Chain.Requests)
	}
	if rep.Chain.Requests < 3 {
		t.Errorf("requests = %d, want resolve + manifest + at least one blob wave", rep.Chain.Requests)
	}
	if !hasWarning(rep, verdict.MirrorFailed) {
		t.Errorf("warnings = %+v, want MIRROR_FAILED", rep.Warnings)
	}
	if rep.Chain.ServedBy.Blobs != st.RegistryHost {
		t.Errorf("blobs served by %q, want %s", rep.Chain.ServedBy.Blobs, st.RegistryHost)
	}
}

func TestChainSilentMirrorOverProgressTimeout(t *testing.T) {
	var mh string
	rep, _ := probeStack(t, labsvc.StackConfig{}, func(o *Options, st *labsvc.Stack) {
		mh = mirrorHost(startMirror(t, st, "silent", "127.0.0.25", labsvc.MirrorSilent), "silent")
		o.CertsDir = writeChain(t, st, "", mh)
		cfg := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(cfg, []byte("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  image_pull_progress_timeout = \"8s\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		o.ContainerdConfig = cfg
	})
	// containerd gives the TLS handshake 10 s, over the 8 s progress timeout
	if rep.Verdict.Code != verdict.MirrorChainTimeout || rep.Verdict.Endpoint != "silent.lab.test" {
		t.Fatalf("verdict = %s at %s (%s), want MIRROR_CHAIN_TIMEOUT at %s", rep.Verdict.Code, rep.Verdict.Endpoint, rep.Verdict.Summary, mh)
	}
	row := chainRow(t, rep, mh)
	if row.Code != verdict.TLSHandshakeTimeout || row.HoldMS != 10000 {
		t.Errorf("mirror row = %s hold %v, want TLS_HANDSHAKE_TIMEOUT held 10000 ms (containerd's TLS handshake timeout)", row.Code, row.HoldMS)
	}
	if rep.Chain.Limits.ProgressTimeoutMS != 8000 {
		t.Errorf("limits = %+v, want the config's 8 s", rep.Chain.Limits)
	}
}

// startCache starts the reference registry as a real pull-through cache
// (distribution's proxy.remoteurl) of the stack's registry, as
// cache.lab.test on 127.0.0.27 with TLS from the stack's CA, its own empty
// storage; it returns the cache's host:port and storage root.
func startCache(t *testing.T, st *labsvc.Stack) (string, string) {
	t.Helper()
	leaf, err := st.CA.Issue(labsvc.LeafOptions{DNSNames: []string{"cache.lab.test"}})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := leaf.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	cache, err := labsvc.StartRegistry(context.Background(), labsvc.RegistryConfig{Addr: "127.0.0.27:0", RootDir: root, Cert: &cert, ProxyRemoteURL: st.Reg.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cache.Close() })
	ip, port, _ := net.SplitHostPort(cache.Addr())
	if err := st.DNS.SetRecords("cache.lab.test", labsvc.DNSRecord{Type: "A", Value: ip}); err != nil {
		t.Fatal(err)
	}
	return "cache.lab.test:" + port, root
}

// TestChainPullThroughCache: the reference registry's own pull-through
// cache in front of the registry. Upstream up: the cache serves and the
// upstream check agrees. Upstream down: the cache still serves the tag it
// stored (distribution's proxy falls back to its local tag), named as
// hiding the broken upstream; a tag it never stored fails on the
// upstream's own failure.
func TestChainPullThroughCache(t *testing.T) {
	st := testenv.StartStack(t, labsvc.StackConfig{RegistryTLS: labsvc.TLSNone, Auth: labsvc.AuthNone, NoRedirect: true})
	uncached := labsvc.ImageSpec{Repository: st.Image.Repository, Tag: "v2", LayerSizes: []int64{2 << 10}, Seed: 9}
	if _, err := labsvc.WriteImage(context.Background(), st.Files.StorageDir, uncached); err != nil {
		t.Fatal(err)
	}
	ch, cacheRoot := startCache(t, st)
	certs := writeChain(t, st, "", ch)
	probe := func(tag string) *report.ProbeReport {
		rep, _ := probeStackOn(t, st, func(o *Options) {
			o.Image = st.RegistryHost + "/" + st.Image.Repository + ":" + tag
			o.CertsDir = certs
			o.CheckUpstream = true
		})
		return rep
	}

	rep := probe(st.Image.Tag)
	if rep.Verdict.Code != verdict.OK {
		t.Fatalf("upstream up: verdict = %s (%s), want OK through the cache", rep.Verdict.Code, rep.Verdict.Summary)
	}
	if want := (report.ServedBy{Resolve: ch, Manifest: ch, Blobs: ch}); rep.Chain.ServedBy != want {
		t.Errorf("upstream up: served by %+v, want the cache for every step %+v", rep.Chain.ServedBy, want)
	}
	if u := rep.Chain.Upstream; u == nil || u.Status != report.StepPass || hasWarning(rep, verdict.MirrorHidesUpstream) {
		t.Errorf("upstream up: upstream check %+v, warnings %+v: want a passing check and no MIRROR_HIDES_UPSTREAM", u, rep.Warnings)
	}
	if _, err := os.Stat(filepath.Join(cacheRoot, "docker/registry/v2/repositories", st.Image.Repository, "_manifests/tags", st.Image.Tag)); err != nil {
		t.Fatalf("the cache did not store the tag it served: %v", err)
	}

	if err := st.Reg.Close(); err != nil {
		t.Fatal(err)
	}
	rep = probe(st.Image.Tag)
	if rep.Verdict.Code != verdict.OK {
		t.Fatalf("upstream down, cached tag: verdict = %s (%s), want OK from the cache", rep.Verdict.Code, rep.Verdict.Summary)
	}
	if rep.Chain.ServedBy.Blobs != ch || !hasWarning(rep, verdict.MirrorHidesUpstream) {
		t.Errorf("upstream down, cached tag: served by %+v, warnings %+v: want the cache and MIRROR_HIDES_UPSTREAM", rep.Chain.ServedBy, rep.Warnings)
	}
	if u := rep.Chain.Upstream; u == nil || u.Status != report.StepFail || u.Host != st.RegistryHost || u.Code != verdict.ConnectRefused {
		t.Errorf("upstream down, cached tag: upstream check = %+v, want %s failing CONNECT_REFUSED", u, st.RegistryHost)
	}

	rep = probe(uncached.Tag)
	if rep.Verdict.Code != verdict.ConnectRefused || rep.Verdict.Endpoint != labsvc.RegistryHostName {
		t.Errorf("upstream down, uncached tag: verdict = %s at %s (%s), want CONNECT_REFUSED at %s", rep.Verdict.Code, rep.Verdict.Endpoint, rep.Verdict.Summary, labsvc.RegistryHostName)
	}
	// distribution's proxy answers 404 for a tag it cannot fetch and never
	// stored: containerd moves on to the upstream, which is down
	if row := chainRow(t, rep, ch); row.Outcome != report.ChainFellThrough || row.Code != verdict.ManifestNotFound {
		t.Errorf("upstream down, uncached tag: cache row %s %s, want fell-through MANIFEST_NOT_FOUND", row.Outcome, row.Code)
	}
}

// TestChainReportRows: a refused mirror, then a Harbor-like cache (HEAD
// 404, GET served), then the registry. Each host has its own row in
// containerd's order; the tag resolves on the registry, the manifest and
// blobs come from the cache; text and JSON say so.
// PULLPATH_CHAIN_RECORD=FILE writes the report's JSON (the printers'
// probe-mirror-chain fixture).
func TestChainReportRows(t *testing.T) {
	var gone, harbor string
	rep, st := probeStack(t, labsvc.StackConfig{NoRedirect: true}, func(o *Options, st *labsvc.Stack) {
		if err := st.DNS.SetRecords("gone.lab.test", labsvc.DNSRecord{Type: "A", Value: "127.0.0.24"}); err != nil {
			t.Fatal(err)
		}
		gone = "gone.lab.test:5000"
		harbor = mirrorHost(startMirror(t, st, "harbor", "127.0.0.22", labsvc.MirrorHeadNotFound), "harbor")
		o.CertsDir = writeChain(t, st, "", gone, harbor)
	})
	if rep.Verdict.Code != verdict.OK {
		t.Fatalf("verdict = %s (%s), want OK", rep.Verdict.Code, rep.Verdict.Summary)
	}
	var order []string
	for _, h := range rep.Chain.Hosts {
		order = append(order, h.Host+" "+string(h.Outcome))
	}
	want := []string{gone + " fell-through", harbor + " served", st.RegistryHost + " served"}
	if strings.Join(order, ", ") != strings.Join(want, ", ") {
		t.Errorf("rows = %v, want %v", order, want)
	}
	if sb := rep.Chain.ServedBy; sb != (report.ServedBy{Resolve: st.RegistryHost, Manifest: harbor, Blobs: harbor}) {
		t.Errorf("served by %+v, want resolve %s, manifest and blobs %s", sb, st.RegistryHost, harbor)
	}
	if rep.Chain.FallThroughMS <= 0 {
		t.Errorf("fall-through cost %v ms, want the refused mirror's time", rep.Chain.FallThroughMS)
	}

	var text bytes.Buffer
	if err := printers.Print(&text, "text", rep, printers.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"HOSTS (containerd's order", "https://" + gone + "/v2", "fell-through CONNECT_REFUSED", "head 404, get 200, blobs 200",
		"served by: resolve " + st.RegistryHost + ", manifest " + harbor + ", blobs " + harbor} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, text.String())
		}
	}
	var js bytes.Buffer
	if err := printers.Print(&js, "json", rep, printers.Options{}); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Chain struct {
			Hosts []struct {
				Host    string `json:"host"`
				Outcome string `json:"outcome"`
			} `json:"hosts"`
			ServedBy map[string]string `json:"servedBy"`
		} `json:"chain"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Chain.Hosts) != 3 || back.Chain.ServedBy["blobs"] != harbor {
		t.Errorf("JSON chain = %+v, want 3 rows and blobs served by %s", back.Chain, harbor)
	}
	if f := os.Getenv("PULLPATH_CHAIN_RECORD"); f != "" {
		if err := os.WriteFile(f, js.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestChainThroughSquid: each host of the chain goes the way the runtime's
// NO_PROXY sends it: the mirror through the real squid (its row's connect
// is the proxy's, then CONNECT), the registry direct.
func TestChainThroughSquid(t *testing.T) {
	var harbor string
	rep, st := probeStack(t, labsvc.StackConfig{NoRedirect: true}, func(o *Options, st *labsvc.Stack) {
		m := startMirror(t, st, "harbor", "127.0.0.22", labsvc.MirrorHeadNotFound)
		harbor = mirrorHost(m, "harbor")
		sq := squidFor(t, st, "127.0.0.62:0", labsvc.SquidConfig{Hosts: map[string]string{"harbor.lab.test": "127.0.0.22", labsvc.AuthHostName: st.Config.Addrs.Token}})
		o.CertsDir = writeChain(t, st, "", harbor)
		withProxy(map[string]string{"HTTPS_PROXY": "http://" + sq.Addr, "NO_PROXY": labsvc.RegistryHostName})(o, st)
	})
	if rep.Verdict.Code != verdict.OK {
		t.Fatalf("verdict = %s (%s), want OK", rep.Verdict.Code, rep.Verdict.Summary)
	}
	row := chainRow(t, rep, harbor)
	if !strings.HasPrefix(row.Via, "proxy ") || chainSteps(row) != "resolve pass, connect pass, proxy-connect pass, tls pass, head fail, get pass, blobs pass" {
		t.Errorf("mirror row via %q steps %s, want through the proxy: resolve and connect (the proxy), proxy-connect, tls, then the registry steps", row.Via, chainSteps(row))
	}
	if reg := chainRow(t, rep, st.RegistryHost); reg.Via != "direct" {
		t.Errorf("registry row via %q, want direct (NO_PROXY)", reg.Via)
	}
}

func chainSteps(h report.ChainHost) string {
	var s []string
	for _, st := range h.Steps {
		s = append(s, st.Name+" "+string(st.Status))
	}
	return strings.Join(s, ", ")
}
