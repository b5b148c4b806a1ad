//go:build !fuzzonly

package pull

import (
	"context"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestProbeThroughBrokenTunnel: a proxy that answers CONNECT 200 and then
// breaks the tunnel (reset, close, an HTML page), or that offers only
// NTLM and Negotiate, is the proxy's verdict: never a route or a
// certificate one.
func TestProbeThroughBrokenTunnel(t *testing.T) {
	st := testenv.StartStack(t, labsvc.StackConfig{})
	tests := []struct {
		fault   string
		listen  string
		env     func(addr string) map[string]string
		code    verdict.Code
		summary []string
		tls     func(*report.TLSInfo) bool
	}{
		{fault: labsvc.TunnelReset, listen: "127.0.0.71:0", code: verdict.ProxyTunnelBroken,
			summary: []string{"answered CONNECT " + labsvc.RegistryHostName + ":", "with 200", "reset the tunnel", "not the node's route"},
			tls:     func(i *report.TLSInfo) bool { return i.Broken == "reset" }},
		{fault: labsvc.TunnelClose, listen: "127.0.0.72:0", code: verdict.ProxyTunnelBroken,
			summary: []string{"with 200", "closed the tunnel", "not the registry's certificate"},
			tls:     func(i *report.TLSInfo) bool { return i.Broken == "closed" }},
		{fault: labsvc.TunnelHTML, listen: "127.0.0.73:0", code: verdict.ProxyTunnelNotTLS,
			summary: []string{"with 200", "not TLS", "HTTP/1.1 200 OK Content-Type: text/html", "Sign in to continue"},
			tls: func(i *report.TLSInfo) bool {
				return i.Broken == "not-tls" && strings.Contains(i.Received, "<title>Network access</title>")
			}},
		{fault: labsvc.AuthNTLMOnly, listen: "127.0.0.74:0", code: verdict.ProxyAuthScheme,
			summary: []string{"407 Proxy Authentication Required", "offers only NTLM and Negotiate", "cannot speak NTLM or Negotiate", "cntlm"}},
		{fault: labsvc.AuthNTLMOnly, listen: "127.0.0.75:0", code: verdict.ProxyAuthScheme,
			env: func(addr string) map[string]string {
				return map[string]string{"HTTPS_PROXY": "http://corp%5Cpuller:ntlm-pass-3@" + addr}
			},
			summary: []string{"offers only NTLM and Negotiate", "no user:password in HTTPS_PROXY helps"}},
	}
	for _, tt := range tests {
		t.Run(tt.fault+" "+tt.listen, func(t *testing.T) {
			p, err := labsvc.StartBadProxy(context.Background(), labsvc.BadProxyConfig{Listen: tt.listen, Fault: tt.fault})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			env := map[string]string{"HTTPS_PROXY": "http://" + p.Addr}
			if tt.env != nil {
				env = tt.env(p.Addr)
			}
			rep := probeOn(t, st, func(o *Options) { withProxy(env)(o, st) })
			wantVerdict(t, rep, tt.code, verdict.ConditionProxy, verdict.RoleRegistry)
			for _, s := range tt.summary {
				if !strings.Contains(rep.Verdict.Summary, s) {
					t.Errorf("summary %q does not say %q", rep.Verdict.Summary, s)
				}
			}
			if got := p.Targets(); len(got) == 0 || !strings.HasPrefix(got[0], "CONNECT "+labsvc.RegistryHostName+":") {
				t.Errorf("the proxy saw %v, want a CONNECT to the registry first", got)
			}
			ep := endpointOf(rep, labsvc.RegistryHostName)
			if ep == nil {
				t.Fatalf("no registry endpoint in %+v", rep.Endpoints)
			}
			if tt.tls != nil && (ep.TLS == nil || !tt.tls(ep.TLS)) {
				t.Errorf("registry TLS = %+v, want the tunnel's break recorded", ep.TLS)
			}
			if tt.fault == labsvc.AuthNTLMOnly {
				if c := ep.Proxy.Connect; c == nil || strings.Join(c.AuthSchemes, ",") != "NTLM,Negotiate" {
					t.Errorf("CONNECT = %+v, want auth schemes NTLM,Negotiate", c)
				}
			}
			if v := rep.Verdict; v.Condition.ExitCode() != 10 {
				t.Errorf("exit code of %s = %d, want 10", v.Condition, v.Condition.ExitCode())
			}
			assertNoSecrets(t, rep, st)
			if strings.Contains(rep.Verdict.Summary, "ntlm-pass-3") {
				t.Errorf("summary holds the proxy password: %s", rep.Verdict.Summary)
			}
		})
	}
}
