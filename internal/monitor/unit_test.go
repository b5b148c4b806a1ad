package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/verdict"
)

func TestCanLand(t *testing.T) {
	n := &node{}
	n.Metadata.Name = "n1"
	n.Metadata.Labels = map[string]string{"pool": "general", "zone": "a", "gen": "5"}
	n.Spec.Taints = []taint{{Key: "dedicated", Value: "db", Effect: "NoSchedule"}, {Key: "soft", Effect: "PreferNoSchedule"}, {Key: "node.kubernetes.io/not-ready", Effect: "NoSchedule"}}
	tolDB := []toleration{{Key: "dedicated", Operator: "Equal", Value: "db", Effect: "NoSchedule"}}
	tpl := func(js string) *podTemplate {
		var p podTemplate
		if err := json.Unmarshal([]byte(js), &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	tests := []struct {
		name string
		tpl  string
		tol  []toleration
		want bool
	}{
		{"untolerated taint", `{"spec":{}}`, nil, false},
		{"tolerated", `{"spec":{}}`, tolDB, true},
		{"tolerate everything", `{"spec":{}}`, []toleration{{Operator: "Exists"}}, true},
		{"wrong value", `{"spec":{}}`, []toleration{{Key: "dedicated", Operator: "Equal", Value: "web"}}, false},
		{"exists on key", `{"spec":{}}`, []toleration{{Key: "dedicated", Operator: "Exists"}}, true},
		{"other effect", `{"spec":{}}`, []toleration{{Key: "dedicated", Operator: "Exists", Effect: "NoExecute"}}, false},
		{"selector matches", `{"spec":{"nodeSelector":{"pool":"general"}}}`, tolDB, true},
		{"selector misses", `{"spec":{"nodeSelector":{"pool":"gpu"}}}`, tolDB, false},
		{"affinity In", `{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}]}]}}}}}`, tolDB, true},
		{"affinity NotIn", `{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"NotIn","values":["a"]}]}]}}}}}`, tolDB, false},
		{"affinity second term", `{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"x","operator":"Exists"}]},{"matchExpressions":[{"key":"gen","operator":"Gt","values":["4"]}]}]}}}}}`, tolDB, true},
		{"affinity DoesNotExist", `{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"pool","operator":"DoesNotExist"}]}]}}}}}`, tolDB, false},
		{"affinity matchFields name", `{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}}}}}`, tolDB, true},
		{"affinity Lt", `{"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"gen","operator":"Lt","values":["5"]}]}]}}}}}`, tolDB, false},
	}
	for _, tt := range tests {
		if got := canLand(tpl(tt.tpl), tt.tol, n); got != tt.want {
			t.Errorf("%s: canLand = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// series counts the series of each metric family.
func series(t *testing.T, m *Metrics) map[string][]*dto.Metric {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*dto.Metric{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf.Metric
	}
	return out
}

// TestMetricsCardinality: 3 images on 2 registry hosts give one series per
// host per gauge, whatever the codes were before; no label holds an image,
// tag, digest or address; a host no image uses any more leaves no series.
func TestMetricsCardinality(t *testing.T) {
	m := NewMetrics()
	m.SetNodeInfo("n1", "general", "zone-a", "10.0.1.0/24")
	m.SetNodeInfo("n1", "general", "zone-a", "10.0.1.0/24")
	rep := func(code verdict.Code, blobHost string) *report.ProbeReport {
		st := verdict.StatusFail
		if code == verdict.OK {
			st = verdict.StatusOK
		}
		return &report.ProbeReport{Verdict: verdict.Verdict{Status: st, Code: code},
			Endpoints: []*report.Endpoint{{Host: "reg", Role: verdict.RoleRegistry}, {Host: blobHost, Role: verdict.RoleBlob}},
			Steps: []report.Step{{Name: "resolve", Endpoint: "reg", DurationMS: 2}, {Name: "resolve", Endpoint: blobHost, DurationMS: 3}, {Name: "layer", Endpoint: blobHost, DurationMS: 10},
				{Name: "layer", Endpoint: blobHost, DurationMS: 5}, {Name: "reference", DurationMS: 1}, {Name: "config", Status: report.StepSkip}},
			Transfer: &report.Transfer{Bytes: 100, Verified: true}}
	}
	now := time.Unix(1700000000, 0)
	for i, code := range []verdict.Code{verdict.ConnectTimeout, verdict.DNSNXDomain, verdict.OK} {
		// a signed blob URL host changes every walk: it must not become a label
		m.observeRun("reg.example.com", rep(code, fmt.Sprintf("bucket-%d.s3.example.com", i)), nil, now)
		m.setHost("reg.example.com", hostState{OK: code == verdict.OK, Code: code, LastSuccess: now})
	}
	m.observeRun("other.example.com:5000", nil, fmt.Errorf("bad node file"), now)
	m.setHost("other.example.com:5000", hostState{Code: ProbeError})
	s := series(t, m)
	want := map[string]int{mSuccess: 2, mVerdictCode: 2, mLastSuccess: 2, mRuns: 3, mBytes: 1, mNodeInfo: 1, mLastRun: 1, mInterval: 1, mTargets: 1, mKubeErrors: 1,
		mStepSeconds: 4, // reg: none/reference, registry/resolve, blob/resolve, blob/layer
		mServedBy:    2} // reg served by itself, other.example.com:5000 by none
	for name, n := range want {
		if len(s[name]) != n {
			t.Errorf("%s: %d series, want %d", name, len(s[name]), n)
		}
	}
	for name, ms := range s {
		for _, mm := range ms {
			for _, l := range mm.Label {
				if strings.Contains(l.GetValue(), "bucket-") || strings.Contains(l.GetValue(), "sha256") || strings.Contains(l.GetValue(), "/") && l.GetName() != "subnet" {
					t.Errorf("%s has label %s=%q", name, l.GetName(), l.GetValue())
				}
				switch l.GetName() {
				case "image_host", "role", "step", "code", "result", "node", "pool", "zone", "subnet", "served_by", "mode":
				default:
					t.Errorf("%s has label %s, not one of the documented ones", name, l.GetName())
				}
			}
		}
	}
	for _, mm := range s[mStepSeconds] {
		lv := map[string]string{}
		for _, l := range mm.Label {
			lv[l.GetName()] = l.GetValue()
		}
		if lv["role"] == "blob" && lv["step"] == "layer" && mm.Gauge.GetValue() != 0.015 {
			t.Errorf("blob/layer = %v s, want 0.015 (two layers summed)", mm.Gauge.GetValue())
		}
	}
	for _, mm := range s[mVerdictCode] {
		if code := labelValue(mm, "code"); code != "OK" && code != string(ProbeError) {
			t.Errorf("stale verdict code series %s kept", code)
		}
	}
	m.dropHost("other.example.com:5000")
	s = series(t, m)
	if len(s[mSuccess]) != 1 || len(s[mVerdictCode]) != 1 || len(s[mLastSuccess]) != 1 {
		t.Errorf("after dropping a host: %d/%d/%d series, want 1/1/1", len(s[mSuccess]), len(s[mVerdictCode]), len(s[mLastSuccess]))
	}
}

// TestServedByBounded: pullpath_served_by names the hosts.toml host that
// served (a mirror, or the registry), one series per image host, a host
// beyond the chain's first 8 as other, and nothing served as none.
func TestServedByBounded(t *testing.T) {
	m := NewMetrics()
	chain := func(by string) *report.ProbeReport {
		ch := &report.HostChain{ServedBy: report.ServedBy{Resolve: by, Manifest: by, Blobs: by}}
		for i := range 10 {
			ch.Hosts = append(ch.Hosts, report.ChainHost{Host: fmt.Sprintf("mirror-%d.corp.example:5000", i), Role: verdict.RoleMirror})
		}
		ch.Hosts = append(ch.Hosts, report.ChainHost{Host: "reg.example.com", Role: verdict.RoleRegistry, Server: true})
		st := verdict.StatusOK
		if by == "" {
			st = verdict.StatusFail
		}
		return &report.ProbeReport{Verdict: verdict.Verdict{Status: st}, Chain: ch}
	}
	now := time.Unix(1700000000, 0)
	for _, tc := range []struct {
		by, wantBy, wantRole string
	}{
		{"mirror-0.corp.example:5000", "mirror-0.corp.example:5000", "mirror"},
		{"reg.example.com", "reg.example.com", "registry"}, // the mirrors fell through
		{"mirror-9.corp.example:5000", "other", "mirror"},  // beyond the first 8
		{"", "none", "none"},
		{"mirror-1.corp.example:5000", "mirror-1.corp.example:5000", "mirror"},
	} {
		m.observeRun("reg.example.com", chain(tc.by), nil, now)
		s := series(t, m)[mServedBy]
		if len(s) != 1 || labelValue(s[0], "served_by") != tc.wantBy || labelValue(s[0], "role") != tc.wantRole || labelValue(s[0], "image_host") != "reg.example.com" {
			var got []string
			for _, mm := range s {
				got = append(got, labelValue(mm, "served_by")+"/"+labelValue(mm, "role"))
			}
			t.Errorf("served by %q: series %v, want one: %s/%s", tc.by, got, tc.wantBy, tc.wantRole)
		}
	}
	// without a chain: the registry host itself when the walk passed
	m.observeRun("plain.example.com", &report.ProbeReport{Verdict: verdict.Verdict{Status: verdict.StatusOK}}, nil, now)
	m.dropHost("reg.example.com")
	s := series(t, m)[mServedBy]
	if len(s) != 1 || labelValue(s[0], "served_by") != "plain.example.com" || labelValue(s[0], "role") != "registry" {
		t.Errorf("after dropping reg.example.com: %d series (%v), want plain.example.com's own", len(s), s)
	}
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestCredentialsCachedForTheirLifetime: a real docker credential helper
// (a script on PATH, as docker-credential-ecr-login would be) is run once
// for many walks while the TTL lasts, again after a Secret update changes
// the mounted file, and the walks still pass with its credentials.
func TestCredentialsCachedForTheirLifetime(t *testing.T) {
	st := testenv.StartStack(t, labsvc.StackConfig{Addrs: labsvc.StackAddrs{DNS: "127.0.44.53", Registry: "127.0.44.10", Token: "127.0.44.11", Blob: "127.0.44.12", Blob2: "127.0.44.13"}})
	dir := t.TempDir()
	count := filepath.Join(dir, "calls")
	helper := fmt.Sprintf("#!/bin/sh\nread server\necho \"$server\" >> %s\nprintf '{\"ServerURL\":\"%%s\",\"Username\":\"%s\",\"Secret\":\"%s\"}' \"$server\"\n", count, st.Username, st.Password)
	if err := os.WriteFile(filepath.Join(dir, "docker-credential-lab"), []byte(helper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"credHelpers": {"`+st.RegistryHost+`": "lab"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o := labOptions(t, labNode{name: "n1", stack: st})
	o.DockerConfig = cfg
	o.Once = true
	a, err := New(o, &syncWriter{b: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls := func() int {
		b, _ := os.ReadFile(count)
		return strings.Count(string(b), "\n")
	}
	tg := a.targets()[0]
	for i := 0; i < 3; i++ {
		a.walk(ctx, tg, true)
		if r := a.results[tg.image]; r.Verdict == nil || r.Verdict.Status != verdict.StatusOK {
			t.Fatalf("walk %d: %+v", i, r)
		}
	}
	if n := calls(); n != 1 {
		t.Errorf("helper ran %d times for 3 walks, want 1 (cached for --credential-ttl)", n)
	}
	// A Secret update rewrites the file: the cache starts over.
	future := time.Now().Add(time.Minute)
	if err := os.Chtimes(cfg, future, future); err != nil {
		t.Fatal(err)
	}
	a.walk(ctx, tg, true)
	if n := calls(); n != 2 {
		t.Errorf("helper ran %d times after the config changed, want 2", n)
	}
	// With the TTL passed, it runs again.
	a.creds.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	a.walk(ctx, tg, true)
	if n := calls(); n != 3 {
		t.Errorf("helper ran %d times after the TTL, want 3", n)
	}
}

// TestCredentialProviderCachedForItsDuration: the kubelet's credential
// provider plugin (a real exec over the kubelet's protocol, a script here
// as ecr-credential-provider would be a binary) runs once for many walks:
// its answer is kept for its cacheDuration, and the walks pass with it.
func TestCredentialProviderCachedForItsDuration(t *testing.T) {
	st := testenv.StartStack(t, labsvc.StackConfig{Addrs: labsvc.StackAddrs{DNS: "127.0.45.53", Registry: "127.0.45.10", Token: "127.0.45.11", Blob: "127.0.45.12", Blob2: "127.0.45.13"}})
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	plugin := fmt.Sprintf(`#!/bin/sh
cat >> %s
echo >> %s
cat <<JSON
{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderResponse","cacheKeyType":"Registry","cacheDuration":"1h","auth":{"%s":{"username":"%s","password":"%s"}}}
JSON
`, calls, calls, st.RegistryHost, st.Username, st.Password)
	if err := os.WriteFile(filepath.Join(dir, "lab-provider"), []byte(plugin), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "credential-provider.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
  - name: lab-provider
    matchImages: ["%s"]
    defaultCacheDuration: "12h"
    apiVersion: credentialprovider.kubelet.k8s.io/v1
`, st.RegistryHost)), 0o644); err != nil {
		t.Fatal(err)
	}
	o := labOptions(t, labNode{name: "n1", stack: st})
	o.DockerConfig, o.ProviderConfig, o.ProviderBinDir, o.Once = "", cfg, dir, true
	a, err := New(o, &syncWriter{b: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	tg := a.targets()[0]
	for i := 0; i < 3; i++ {
		a.walk(context.Background(), tg, true)
		if r := a.results[tg.image]; r.Verdict == nil || r.Verdict.Status != verdict.StatusOK {
			t.Fatalf("walk %d with the provider's credentials: %+v %+v", i, r, r.Verdict)
		}
	}
	b, _ := os.ReadFile(calls)
	if n := strings.Count(string(b), "CredentialProviderRequest"); n != 1 {
		t.Errorf("the plugin ran %d times for 3 walks, want 1 (cached for its cacheDuration)", n)
	}
	// without credentials the registry refuses: the provider was the lever
	o.ProviderConfig, o.ProviderBinDir = "", ""
	b2, err := New(o, &syncWriter{b: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	b2.walk(context.Background(), tg, true)
	if r := b2.results[tg.image]; r.Verdict == nil || r.Verdict.Status == verdict.StatusOK {
		t.Errorf("anonymous walk = %+v, want a failure", r.Verdict)
	}
}
