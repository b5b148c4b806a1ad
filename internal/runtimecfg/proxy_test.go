package runtimecfg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/verdict"
)

// decideCases are proxy environments and request URLs, with what the
// runtime does: the proxy's host:port, or "direct" and the NO_PROXY entry
// that matched.
var decideCases = []struct {
	env   map[string]string
	url   string
	proxy string // host:port, "" for direct
	entry string
	ipEnt []string
}{
	{env: map[string]string{"HTTPS_PROXY": "http://proxy.corp:3128"}, url: "https://registry.corp/v2/", proxy: "proxy.corp:3128"},
	{env: map[string]string{"HTTPS_PROXY": "http://proxy.corp:3128"}, url: "http://registry.corp/v2/"},
	{env: map[string]string{"HTTP_PROXY": "http://proxy.corp:3128"}, url: "https://registry.corp/v2/"},
	{env: map[string]string{"HTTP_PROXY": "http://proxy.corp:3128"}, url: "http://registry.corp:5000/v2/", proxy: "proxy.corp:3128"},
	{env: map[string]string{"HTTPS_PROXY": "http://up:1", "https_proxy": "http://low:2"}, url: "https://r.io/", proxy: "up:1"},
	{env: map[string]string{"https_proxy": "http://low:2"}, url: "https://r.io/", proxy: "low:2"},
	{env: map[string]string{"HTTPS_PROXY": "proxy.corp:3128"}, url: "https://r.io/", proxy: "proxy.corp:3128"},
	{env: map[string]string{"HTTPS_PROXY": "http://[bad"}, url: "https://r.io/", proxy: "http:"}, // Go reads it as http://http://[bad
	{env: map[string]string{"HTTPS_PROXY": "%zz"}, url: "https://r.io/"},                         // neither parses: ignored
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": ".corp"}, url: "https://registry.corp/", entry: ".corp"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": ".corp"}, url: "https://corp/", proxy: "p:1"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "corp"}, url: "https://corp/", entry: "corp"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "corp"}, url: "https://a.b.corp/", entry: "corp"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*.corp"}, url: "https://x.corp/", entry: "*.corp"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*.corp"}, url: "https://corp/", proxy: "p:1"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "localhost, 10.0.0.0/8"}, url: "https://registry.corp/", proxy: "p:1", ipEnt: []string{"10.0.0.0/8"}},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "10.0.0.0/8"}, url: "https://10.1.2.3/", entry: "10.0.0.0/8"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "10.1.2.3:5000"}, url: "https://10.1.2.3:5000/", entry: "10.1.2.3:5000"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "10.1.2.3:5000"}, url: "https://10.1.2.3/", proxy: "p:1"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "registry.corp:5000"}, url: "https://registry.corp/", proxy: "p:1"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "registry.corp:5000"}, url: "https://registry.corp:5000/", entry: "registry.corp:5000"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "Registry.Corp"}, url: "https://registry.corp/", entry: "Registry.Corp"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*"}, url: "https://r.io/", entry: "*"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "other", "no_proxy": ".io"}, url: "https://r.io/", proxy: "p:1"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1", "no_proxy": ".io"}, url: "https://r.io/", entry: ".io"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1"}, url: "https://localhost:5000/"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1"}, url: "https://127.0.0.1:5000/"},
	{env: map[string]string{"HTTPS_PROXY": "http://p:1"}, url: "https://[::1]:5000/"},
	{env: map[string]string{"HTTPS_PROXY": "http://user:secret@p:1"}, url: "https://r.io/", proxy: "p:1"},
}

func envVars(env map[string]string) map[string]EnvVar {
	out := map[string]EnvVar{}
	for k, v := range env {
		out[k] = EnvVar{Name: k, Value: v, From: "test"}
	}
	return out
}

func TestDecide(t *testing.T) {
	for _, tt := range decideCases {
		u, _ := url.Parse(tt.url)
		d := SettingsFromEnv(envVars(tt.env), "test").Decide(u)
		got := ""
		if d.Proxy != nil {
			got = d.Proxy.Host
		}
		if got != tt.proxy || d.NoProxyMatch != tt.entry {
			t.Errorf("Decide(%v, %s) = proxy %q entry %q (%s), want proxy %q entry %q", tt.env, tt.url, got, d.NoProxyMatch, d.Reason, tt.proxy, tt.entry)
		}
		if diff := cmp.Diff(tt.ipEnt, d.IPEntries); diff != "" {
			t.Errorf("Decide(%v, %s) IPEntries (-want +got):\n%s", tt.env, tt.url, diff)
		}
		if d.Reason == "" || strings.Contains(d.Reason, "secret") {
			t.Errorf("Decide(%v, %s) reason %q: want one line without the password", tt.env, tt.url, d.Reason)
		}
	}
}

// TestDecideAgainstNetHTTP runs net/http's own ProxyFromEnvironment (what
// containerd's transport calls) in a child process with each environment,
// and wants Decide to agree on every request: which variables win, how
// NO_PROXY matches.
func TestDecideAgainstNetHTTP(t *testing.T) {
	if os.Getenv("PP_PROXY_HELPER") != "" {
		return
	}
	for _, tt := range decideCases {
		u, _ := url.Parse(tt.url)
		cmd := exec.Command(os.Args[0], "-test.run=^TestNetHTTPHelper$")
		cmd.Env = []string{"PP_PROXY_HELPER=1", "PP_URL=" + tt.url}
		for k, v := range tt.env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("helper: %v\n%s", err, out.String())
		}
		line := ""
		for _, l := range strings.Split(out.String(), "\n") {
			if v, ok := strings.CutPrefix(l, "PROXY="); ok {
				line = v
			}
		}
		var want string
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatalf("helper output %q: %v", out.String(), err)
		}
		d := SettingsFromEnv(envVars(tt.env), "test").Decide(u)
		got := ""
		if d.Proxy != nil {
			got = d.Proxy.String()
		}
		if got != want {
			t.Errorf("env %v, %s: Decide says %q, net/http.ProxyFromEnvironment says %q", tt.env, tt.url, got, want)
		}
	}
}

// TestNetHTTPHelper is the child of TestDecideAgainstNetHTTP.
func TestNetHTTPHelper(t *testing.T) {
	if os.Getenv("PP_PROXY_HELPER") == "" {
		t.Skip("helper process only")
	}
	req, _ := http.NewRequest(http.MethodGet, os.Getenv("PP_URL"), nil)
	p, err := http.ProxyFromEnvironment(req)
	s := ""
	if err == nil && p != nil {
		s = p.String()
	}
	b, _ := json.Marshal(s)
	fmt.Printf("PROXY=%s\n", b)
}

func TestProxyWarnings(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want []verdict.Code
	}{
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "HTTP_PROXY": "http://p:1"}},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "https_proxy": "http://q:2"}, want: []verdict.Code{verdict.ProxyEnvCaseConflict}},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "https_proxy": "http://p:1"}},
		{env: map[string]string{"HTTPS_PROXY": "p:3128"}, want: []verdict.Code{verdict.ProxyURLNoScheme}},
		{env: map[string]string{"HTTPS_PROXY": "http://[bad"}, want: []verdict.Code{verdict.ProxyURLInvalid}},
		{env: map[string]string{"HTTPS_PROXY": "%zz"}, want: []verdict.Code{verdict.ProxyURLInvalid}},
		{env: map[string]string{"HTTP_PROXY": "http://p:1"}, want: []verdict.Code{verdict.ProxyHTTPSMissing}},
		{env: map[string]string{"NO_PROXY": "a", "no_proxy": "b", "HTTPS_PROXY": "http://u:pw@p:1"}, want: []verdict.Code{verdict.ProxyEnvCaseConflict}},
	}
	for _, tt := range tests {
		vars := envVars(tt.env)
		ws := SettingsFromEnv(vars, "test").Warnings(vars)
		var got []verdict.Code
		for _, w := range ws {
			got = append(got, w.Code)
			if strings.Contains(w.Message, ":pw@") {
				t.Errorf("warning %q shows a password", w.Message)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Warnings(%v) (-want +got):\n%s", tt.env, diff)
		}
	}
}

func TestEntryCovers(t *testing.T) {
	tests := []struct {
		entry, addr string
		want        bool
	}{
		{"10.0.0.0/8", "10.20.0.5", true},
		{"10.0.0.0/8", "192.168.0.1", false},
		{"10.20.0.5", "10.20.0.5", true},
		{"10.20.0.5:443", "10.20.0.5", true},
		{"fd00::/8", "fd00::1", true},
		{".corp", "10.20.0.5", false},
	}
	for _, tt := range tests {
		if got := EntryCovers(tt.entry, tt.addr); got != tt.want {
			t.Errorf("EntryCovers(%q, %q) = %v, want %v", tt.entry, tt.addr, got, tt.want)
		}
	}
}
