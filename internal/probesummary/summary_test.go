package probesummary

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// A summary cut to fit the kubelet's 4 KiB keeps the code and the failing
// hop, and reads back; anything but the probe's verdict JSON is an error.
func TestProbeSummaryFitsTerminationMessage(t *testing.T) {
	r := &report.ProbeReport{Image: "reg.example/app:1", Node: "n1"}
	r.Verdict.Status, r.Verdict.Code, r.Verdict.Summary = "fail", "BLOB_CONNECT_TIMEOUT", string(make([]byte, 3000))
	for i := 0; i < 200; i++ {
		r.Endpoints = append(r.Endpoints, &report.Endpoint{Host: "host-" + string(rune('a'+i%26)) + ".blob.example", Role: "blob", Status: report.StepPass})
	}
	r.Endpoints = append(r.Endpoints, &report.Endpoint{Host: "bad.blob.example", Role: "blob", Status: report.StepFail, Code: "BLOB_CONNECT_TIMEOUT"})
	r.Verdict.Endpoint = "bad.blob.example"
	b := Of(r).Marshal()
	if len(b) > MaxTerminationMessage {
		t.Fatalf("summary is %d bytes, want <= %d", len(b), MaxTerminationMessage)
	}
	s, err := Parse(string(b))
	if err != nil {
		t.Fatalf("Parse(Marshal()) = %v", err)
	}
	if !s.Cut || s.Code != "BLOB_CONNECT_TIMEOUT" || len(s.Hops) != 1 || s.Hops[0].Host != "bad.blob.example" {
		t.Errorf("cut summary = cut %v code %s hops %+v, want cut, the code, and the failing hop kept", s.Cut, s.Code, s.Hops)
	}
	for _, bad := range []string{"", "panic: runtime error", `{"v":2,"status":"ok"}`, `{"v":1}`} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = nil error, want one", bad)
		}
	}
}

// The compact summary names the runtime, its file and the mirrors in
// effect from the chain, each with its file.
func TestSummaryRuntime(t *testing.T) {
	rep := &report.ProbeReport{
		RuntimeConfig: &report.RuntimeConfig{Runtime: "containerd", Version: "1.6.20", Layout: "k3s", ConfigFile: "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"},
		Chain: &report.HostChain{Hosts: []report.ChainHost{
			{Host: "mirror.corp.example:5000", Role: verdict.RoleMirror, Source: "/var/lib/rancher/k3s/agent/etc/containerd/certs.d/registry.corp.example/hosts.toml"},
			{Host: "registry.corp.example", Role: verdict.RoleRegistry, Server: true},
		}},
	}
	s := Of(rep)
	if s.Runtime != "containerd 1.6.20 (k3s) /var/lib/rancher/k3s/agent/etc/containerd/config.toml" {
		t.Errorf("Runtime = %q", s.Runtime)
	}
	if len(s.Mirrors) != 1 || s.Mirrors[0] != "mirror.corp.example:5000 (/var/lib/rancher/k3s/agent/etc/containerd/certs.d/registry.corp.example/hosts.toml)" {
		t.Errorf("Mirrors = %q, want the chain's mirror and its file", s.Mirrors)
	}
	rep.RuntimeConfig.Override = "--certs-dir /x replaces ..."
	if s := Of(rep); !strings.HasSuffix(s.Runtime, "; --certs-dir override") {
		t.Errorf("Runtime = %q, want the override said", s.Runtime)
	}
}

// TestSummaryProxy: the compact summary says how the walk went.
func TestSummaryProxy(t *testing.T) {
	rep := &report.ProbeReport{Proxy: &report.ProxyConfig{Origin: "the running containerd (pid 7, containerd.service): /proc/7/environ"},
		Endpoints: []*report.Endpoint{
			{Host: "registry.lab.test", Role: verdict.RoleRegistry, Proxy: &report.EndpointProxy{Via: "direct", NoProxyMatch: ".lab.test"}},
			{Host: "blob.example.com", Role: verdict.RoleBlob, Proxy: &report.EndpointProxy{Via: "proxy", Proxy: "10.0.0.9:3128"}},
		}}
	if got := Of(rep).Proxy; got != "proxy 10.0.0.9:3128, from the running containerd (pid 7, containerd.service): /proc/7/environ" {
		t.Errorf("Proxy = %q", got)
	}
	if got := Of(&report.ProbeReport{}).Proxy; got != "" {
		t.Errorf("no proxy settings: Proxy = %q, want empty", got)
	}
}

// The summary names the file line behind the proxy when the origin does
// not (the files, not the running process).
func TestSummaryProxyNamesTheFile(t *testing.T) {
	const via = "proxy 10.0.40.10:3128 (HTTPS_PROXY in /etc/systemd/system/containerd.service.d/http-proxy.conf:3 (Environment=)), from the files of containerd.service (no running runtime's environment could be read)"
	rep := &report.ProbeReport{Proxy: &report.ProxyConfig{Origin: "the files of containerd.service (no running runtime's environment could be read)",
		Sources: []report.ProxyVar{{Name: "HTTPS_PROXY", Value: "http://10.0.40.10:3128", From: "/etc/systemd/system/containerd.service.d/http-proxy.conf:3 (Environment=)"}}},
		Endpoints: []*report.Endpoint{{Host: "registry.lab.test", Role: verdict.RoleRegistry, Proxy: &report.EndpointProxy{Via: "proxy", Proxy: "10.0.40.10:3128", Variable: "HTTPS_PROXY"}}}}
	if got := Of(rep).Proxy; got != via {
		t.Errorf("Proxy = %q, want %q", got, via)
	}
}

// A hop's address is where the walk reached the host: the first address
// that connected, else the first tried (the one the verdict names), with
// no port, IPv6 as well as IPv4.
func TestHopAddress(t *testing.T) {
	r := &report.ProbeReport{Verdict: verdict.Verdict{Status: verdict.StatusFail, Code: verdict.ConnectTimeout, Endpoint: "blob.example"},
		Endpoints: []*report.Endpoint{
			{Host: "reg.example", Role: verdict.RoleRegistry, Status: report.StepPass, Addresses: []report.AddrResult{
				{Address: "10.0.0.1:443", Result: "timeout"}, {Address: "10.0.0.2:443", Result: "ok"}}},
			{Host: "blob.example", Role: verdict.RoleBlob, Status: report.StepFail, Code: verdict.ConnectTimeout, Addresses: []report.AddrResult{
				{Address: "[fd00:20::10]:443", Result: "timeout"}, {Address: "10.0.20.10:443", Result: "timeout"}}},
			{Host: "auth.example", Role: verdict.RoleAuth, Status: report.StepFail, Code: verdict.DNSNXDomain},
		},
		Steps: []report.Step{{Name: "connect", Endpoint: "blob.example", Status: report.StepFail}},
	}
	s := Of(r)
	want := map[string]string{"reg.example": "10.0.0.2", "blob.example": "fd00:20::10", "auth.example": ""}
	if len(s.Hops) != len(want) {
		t.Fatalf("hops = %+v, want %d", s.Hops, len(want))
	}
	for _, h := range s.Hops {
		if h.Address != want[h.Host] {
			t.Errorf("hop %s address = %q, want %q", h.Host, h.Address, want[h.Host])
		}
	}
}

// The compact summary carries each warning code once, bounded.
func TestSummaryWarnings(t *testing.T) {
	rep := &report.ProbeReport{Warnings: []report.Warning{{Code: verdict.MirrorHidesUpstream}, {Code: verdict.MirrorHidesUpstream}, {Code: verdict.IPv6PathBroken}}}
	for i := 0; i < 10; i++ {
		rep.Warnings = append(rep.Warnings, report.Warning{Code: verdict.Code("W" + string(rune('A'+i)))})
	}
	got := Of(rep).Warnings
	if len(got) != 6 || got[0] != verdict.MirrorHidesUpstream || got[1] != verdict.IPv6PathBroken {
		t.Errorf("summary warnings = %v, want MIRROR_HIDES_UPSTREAM, IPV6_PATH_BROKEN first, each once, 6 at most", got)
	}
}

// The wire format is what probe Pods of every release write and sweeps of
// every release read: field names and order, pinned.
func TestWireFormat(t *testing.T) {
	r := &report.ProbeReport{Node: "n1", Image: "reg.example/app:1", DurationMS: 812.7,
		Verdict:   verdict.Verdict{Status: verdict.StatusFail, Cause: verdict.CauseOther, Code: verdict.ConnectTimeout, Endpoint: "blob.example", Role: verdict.RoleBlob, Summary: "blob.example: connect timed out"},
		Endpoints: []*report.Endpoint{{Host: "blob.example", Role: verdict.RoleBlob, Status: report.StepFail, Code: verdict.ConnectTimeout, Addresses: []report.AddrResult{{Address: "10.0.20.10:443", Result: "timeout"}}}},
		Steps:     []report.Step{{Name: "connect", Endpoint: "blob.example", Status: report.StepFail}},
		Warnings:  []report.Warning{{Code: verdict.IPv6PathBroken}},
		Proxy:     &report.ProxyConfig{Origin: "none found"},
	}
	const want = `{"v":1,"node":"n1","image":"reg.example/app:1","status":"fail","cause":"other","code":"CONNECT_TIMEOUT","endpoint":"blob.example","role":"blob","summary":"blob.example: connect timed out","hops":[{"host":"blob.example","role":"blob","address":"10.0.20.10","status":"fail","step":"connect","code":"CONNECT_TIMEOUT"}],"warnings":["IPV6_PATH_BROKEN"],"ms":812,"proxy":"direct, from none found"}`
	if got := string(Of(r).Marshal()); got != want {
		t.Errorf("Marshal =\n%s\nwant\n%s", got, want)
	}
	s, err := Parse(want)
	if err != nil || s.Verdict().Code != verdict.ConnectTimeout || s.Hops[0].Address != "10.0.20.10" {
		t.Errorf("Parse = %+v, %v", s, err)
	}
}
