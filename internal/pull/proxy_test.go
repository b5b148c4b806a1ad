//go:build !fuzzonly

package pull

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/printers"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/verdict"
)

// squidFor starts the real squid on loopback for st, resolving the
// stack's names itself (hosts: name -> IP; nil means all of the stack's).
func squidFor(t *testing.T, st *labsvc.Stack, listen string, cfg labsvc.SquidConfig) *labsvc.Squid {
	t.Helper()
	if why := labsvc.SquidAvailable(cfg.Intercept != nil); why != "" {
		testenv.Unavailable(t, why)
	}
	if cfg.Hosts == nil {
		a := st.Config.Addrs
		cfg.Hosts = map[string]string{labsvc.RegistryHostName: a.Registry, labsvc.AuthHostName: a.Token, labsvc.BlobHostName: a.Blob}
	}
	cfg.Listen = listen
	sq, err := labsvc.StartSquid(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	return sq
}

// withProxy makes the walk follow env as the runtime's environment.
func withProxy(env map[string]string) func(*Options, *labsvc.Stack) {
	return func(o *Options, _ *labsvc.Stack) {
		vars := map[string]runtimecfg.EnvVar{}
		for k, v := range env {
			vars[k] = runtimecfg.EnvVar{Name: k, Value: v, From: "test drop-in"}
		}
		s := runtimecfg.SettingsFromEnv(vars, "test")
		o.Proxy = &runtimecfg.ProxyDiscovery{Settings: s, Warnings: s.Warnings(vars)}
	}
}

func endpointOf(rep *report.ProbeReport, host string) *report.Endpoint {
	for _, e := range rep.Endpoints {
		if e.Host == host {
			return e
		}
	}
	return nil
}

func wantVerdict(t *testing.T, rep *report.ProbeReport, code verdict.Code, cond verdict.Condition, role verdict.Role) {
	t.Helper()
	v := rep.Verdict
	if v.Code != code || v.Condition != cond || v.Role != role {
		b, _ := json.MarshalIndent(rep, "", "  ")
		t.Fatalf("verdict = %s/%s/%s (%s), want %s/%s/%s\n%s", v.Code, v.Condition, v.Role, v.Summary, code, cond, role, b)
	}
	if v.Status == verdict.StatusFail && len(v.Advice) == 0 {
		t.Errorf("failure %s has no advice", v.Code)
	}
}

// TestProbeThroughSquidNoDirectPath: the node resolves none of the
// registry's names, so only the proxy can pull; every hop goes through
// the real squid, which resolves and tunnels.
func TestProbeThroughSquidNoDirectPath(t *testing.T) {
	nx := map[string]labsvc.DNSBehaviour{labsvc.RegistryHostName: labsvc.DNSNXDomain, labsvc.AuthHostName: labsvc.DNSNXDomain, labsvc.BlobHostName: labsvc.DNSNXDomain}
	var sq *labsvc.Squid
	rep, st := probeStack(t, labsvc.StackConfig{DNSBehaviours: nx,
		DNSRecords: map[string][]labsvc.DNSRecord{"proxy.lab.test": {{Type: "A", Value: "127.0.0.62"}}}},
		func(o *Options, st *labsvc.Stack) {
			sq = squidFor(t, st, "127.0.0.62:0", labsvc.SquidConfig{})
			_, port, _ := strings.Cut(sq.Addr, ":")
			withProxy(map[string]string{"HTTPS_PROXY": "http://proxy.lab.test:" + port})(o, st)
		})
	wantVerdict(t, rep, verdict.OK, "", "")
	for _, e := range rep.Endpoints {
		if e.Proxy == nil || e.Proxy.Via != "proxy" || e.Proxy.Connect == nil || e.Proxy.Connect.Status != 200 {
			t.Errorf("endpoint %s: proxy %+v, want through the proxy with CONNECT 200", e.Host, e.Proxy)
		}
		if e.Resolve != nil {
			t.Errorf("endpoint %s was resolved by the node (%+v): through a proxy only the proxy resolves it", e.Host, e.Resolve)
		}
	}
	if len(rep.Endpoints) < 3 {
		t.Errorf("endpoints %d, want registry, token and blob hosts", len(rep.Endpoints))
	}
	log, _ := sq.AccessLog()
	for _, host := range []string{labsvc.RegistryHostName, labsvc.AuthHostName, labsvc.BlobHostName} {
		if !strings.Contains(log, "CONNECT "+host+":") {
			t.Errorf("squid's access log has no CONNECT to %s:\n%s", host, log)
		}
	}
	var text strings.Builder
	printers.Print(&text, "text", rep, printers.Options{})
	if !strings.Contains(text.String(), "via proxy proxy.lab.test:") {
		t.Errorf("text output does not say via proxy per host:\n%s", text.String())
	}
	assertNoSecrets(t, rep, st)

	// The same node behind a proxy that cannot resolve the registry: the
	// far side is broken, not the node, and the registry is no internal
	// host the node could reach.
	blind := squidFor(t, st, "127.0.0.69:0", labsvc.SquidConfig{Hosts: map[string]string{"unrelated.lab.test": "127.0.0.1"}})
	rep = probeOn(t, st, func(o *Options) { withProxy(map[string]string{"HTTPS_PROXY": "http://" + blind.Addr})(o, st) })
	wantVerdict(t, rep, verdict.ProxyUpstreamFailed, verdict.ConditionProxy, verdict.RoleRegistry)
	if !strings.Contains(rep.Verdict.Summary, "not the node") {
		t.Errorf("summary %q does not say the far side of the proxy is broken", rep.Verdict.Summary)
	}
}

// TestProbeThroughSquidVerdicts: each way the proxy is the broken link,
// with the real squid answering.
func TestProbeThroughSquidVerdicts(t *testing.T) {
	if why := labsvc.SquidAvailable(true); why != "" {
		testenv.Unavailable(t, why)
	}
	st := testenv.StartStack(t, labsvc.StackConfig{})
	a := st.Config.Addrs
	open := squidFor(t, st, "127.0.0.63:0", labsvc.SquidConfig{})
	authed := squidFor(t, st, "127.0.0.64:0", labsvc.SquidConfig{Users: map[string]string{"puller": "proxy-pass-7"}})
	denyBlob := squidFor(t, st, "127.0.0.65:0", labsvc.SquidConfig{Deny: []string{labsvc.BlobHostName}})
	blind := squidFor(t, st, "127.0.0.66:0", labsvc.SquidConfig{Hosts: map[string]string{"unrelated.lab.test": "127.0.0.1"}})
	bumpCA, err := labsvc.NewCA("pullpath lab Squid inspection CA")
	if err != nil {
		t.Fatal(err)
	}
	bump := squidFor(t, st, "127.0.0.67:0", labsvc.SquidConfig{Intercept: bumpCA, UpstreamCAFile: st.Files.CAFile})
	bumpCAFile := filepath.Join(t.TempDir(), "bump-ca.crt")
	if err := bumpCA.WriteCAFile(bumpCAFile); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		env      map[string]string
		mut      func(*Options)
		code     verdict.Code
		cond     verdict.Condition
		role     verdict.Role
		warn     verdict.Code
		summary  []string
		noSecret string
	}{
		{name: "healthy through the proxy", env: map[string]string{"HTTPS_PROXY": "http://" + open.Addr}, code: verdict.OK},
		{name: "proxy down", env: map[string]string{"HTTPS_PROXY": "http://127.0.0.68:3128"},
			code: verdict.ProxyRefused, cond: verdict.ConditionProxy, role: verdict.RoleRegistry, summary: []string{"127.0.0.68:3128", "refuses connections"}},
		{name: "proxy name does not resolve", env: map[string]string{"HTTPS_PROXY": "http://noproxy.lab.test:3128"},
			code: verdict.ProxyDNS, cond: verdict.ConditionProxy, role: verdict.RoleRegistry, summary: []string{"cannot resolve the proxy's name noproxy.lab.test"}},
		{name: "proxy demands authentication", env: map[string]string{"HTTPS_PROXY": "http://" + authed.Addr},
			code: verdict.ProxyAuthRequired, cond: verdict.ConditionProxy, role: verdict.RoleRegistry, summary: []string{"407 Proxy Authentication Required", "no user:password"}},
		{name: "proxy credentials accepted", env: map[string]string{"HTTPS_PROXY": "http://puller:proxy-pass-7@" + authed.Addr},
			code: verdict.OK, noSecret: "proxy-pass-7"},
		{name: "proxy credentials refused", env: map[string]string{"HTTPS_PROXY": "http://puller:wrong-pass-9@" + authed.Addr},
			code: verdict.ProxyAuthRequired, cond: verdict.ConditionProxy, role: verdict.RoleRegistry, summary: []string{"was refused"}, noSecret: "wrong-pass-9"},
		{name: "registry in NO_PROXY, blob host denied by the proxy's ACL",
			env:  map[string]string{"HTTPS_PROXY": "http://" + denyBlob.Addr, "NO_PROXY": labsvc.RegistryHostName + "," + labsvc.AuthHostName},
			code: verdict.ProxyDenied, cond: verdict.ConditionProxy, role: verdict.RoleBlob,
			summary: []string{"403 Forbidden", "the registry never saw the request", "connects to " + a.Blob}},
		{name: "the proxy cannot reach an internal registry: NO_PROXY has only its CIDR",
			env:  map[string]string{"HTTPS_PROXY": "http://" + blind.Addr, "NO_PROXY": "localhost,127.0.0.0/8"},
			code: verdict.ProxyNoProxyMiss, cond: verdict.ConditionProxy, role: verdict.RoleRegistry,
			summary: []string{"the proxy cannot reach it: CONNECT " + labsvc.RegistryHostName, "(ERR_CANNOT_FORWARD", `NO_PROXY's "127.0.0.0/8" covers ` + a.Registry, "IP literals only"}},
		{name: "TLS interception, CA not trusted", env: map[string]string{"HTTPS_PROXY": "http://" + bump.Addr},
			code: verdict.ProxyTLSIntercepted, cond: verdict.ConditionTLSIdentity, role: verdict.RoleRegistry, summary: []string{"pullpath lab Squid inspection CA", "Squid (ssl-bump)"}},
		{name: "TLS interception, CA trusted", env: map[string]string{"HTTPS_PROXY": "http://" + bump.Addr},
			mut: func(o *Options) { o.ExtraCAs = append(o.ExtraCAs, bumpCAFile) }, code: verdict.OK, warn: verdict.ProxyTLSInterception},
		{name: "HTTP_PROXY only: registries are https, so the pull goes direct", env: map[string]string{"HTTP_PROXY": "http://127.0.0.68:3128"},
			code: verdict.OK, warn: verdict.ProxyHTTPSMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := probeOn(t, st, func(o *Options) {
				withProxy(tt.env)(o, st)
				if tt.mut != nil {
					tt.mut(o)
				}
			})
			wantVerdict(t, rep, tt.code, tt.cond, tt.role)
			for _, s := range tt.summary {
				if !strings.Contains(rep.Verdict.Summary, s) {
					t.Errorf("summary %q does not say %q", rep.Verdict.Summary, s)
				}
			}
			if tt.warn != "" && !hasWarning(rep, tt.warn) {
				t.Errorf("warnings %+v, want %s", rep.Warnings, tt.warn)
			}
			assertNoSecrets(t, rep, st)
			if tt.noSecret != "" {
				b, _ := json.Marshal(rep)
				if strings.Contains(string(b), tt.noSecret) {
					t.Errorf("the report holds the proxy password %q", tt.noSecret)
				}
			}
		})
	}

	t.Run("registry direct by NO_PROXY, its entry named", func(t *testing.T) {
		rep := probeOn(t, st, func(o *Options) {
			withProxy(map[string]string{"HTTPS_PROXY": "http://" + open.Addr, "NO_PROXY": ".lab.test"})(o, st)
		})
		wantVerdict(t, rep, verdict.OK, "", "")
		for _, e := range rep.Endpoints {
			if e.Proxy == nil || e.Proxy.Via != "direct" || e.Proxy.NoProxyMatch != ".lab.test" {
				t.Errorf("endpoint %s: %+v, want direct by NO_PROXY entry .lab.test", e.Host, e.Proxy)
			}
		}
	})
}

// probeOn probes st's image with the stack's node files and mut applied.
func probeOn(t *testing.T, st *labsvc.Stack, mut func(*Options)) *report.ProbeReport {
	t.Helper()
	rep, _ := probeStackOn(t, st, mut)
	return rep
}
