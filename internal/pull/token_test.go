package pull

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// Token services that redirect, oversize or garble their answer, and
// challenges containerd would not accept: real TLS servers on loopback.
// The token host answers as auth.hostile.test and other.hostile.test (one
// server, two names in the hosts file, so two endpoints of the walk).
func TestProbeTokenService(t *testing.T) {
	const good = "good-token-0123456789"
	img := newTestImage()
	redirects := func(n int, final string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var i int
			fmt.Sscanf(r.URL.Path, "/hop/%d", &i)
			if r.URL.Path == "/token" || i > 0 && i < n {
				http.Redirect(w, r, fmt.Sprintf("/hop/%d", i+1), http.StatusTemporaryRedirect)
				return
			}
			w.Write([]byte(final))
		}
	}
	tests := []struct {
		name      string
		challenge string // %s is the token server's host:port
		auth      http.HandlerFunc
		wantCode  verdict.Code
		wantRole  verdict.Role
		wantSum   string
		check     func(t *testing.T, seen map[string]string) // Authorization by host and path
	}{
		{name: "realm 307 on the same host keeps the credentials", challenge: `Bearer realm="https://auth.hostile.test:%s/token",service="reg"`,
			auth: func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/token" {
					http.Redirect(w, r, "/token2", http.StatusTemporaryRedirect)
					return
				}
				if u, p, ok := r.BasicAuth(); !ok || u != "u" || p != "pw-secret" {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				w.Write([]byte(`{"token":"` + good + `"}`))
			}, wantCode: verdict.OK},
		{name: "realm 307 to another host: walked as an endpoint, no credentials sent", challenge: `Bearer realm="https://auth.hostile.test:%s/token",service="reg"`,
			auth: func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.Host, "auth.") {
					http.Redirect(w, r, "https://other.hostile.test:"+portOf(r.Host)+"/t", http.StatusTemporaryRedirect)
					return
				}
				w.Write([]byte(`{"access_token":"` + good + `"}`))
			}, wantCode: verdict.OK,
			check: func(t *testing.T, seen map[string]string) {
				if a := seen["other.hostile.test/t"]; a != "" {
					t.Errorf("the other host got credentials: %q", a)
				}
				if seen["auth.hostile.test/token"] == "" {
					t.Errorf("the realm host did not get the credentials")
				}
			}},
		{name: "realm redirect to a host that does not resolve", challenge: `Bearer realm="https://auth.hostile.test:%s/token"`,
			auth: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://nowhere.hostile.test/t", http.StatusFound)
			}, wantRole: verdict.RoleAuth, wantSum: "nowhere.hostile.test"},
		{name: "9 redirects are followed", challenge: `Bearer realm="https://auth.hostile.test:%s/token"`, auth: redirects(9, `{"access_token":"`+good+`"}`), wantCode: verdict.OK},
		{name: "the 10th redirect stops, containerd's limit", challenge: `Bearer realm="https://auth.hostile.test:%s/token"`, auth: redirects(10, `{"token":"`+good+`"}`),
			wantCode: verdict.RedirectLoop, wantRole: verdict.RoleAuth, wantSum: "9 redirects, containerd's limit"},
		{name: "token over the read limit", challenge: `Bearer realm="https://auth.hostile.test:%s/token"`,
			auth: func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(`{"token":"` + strings.Repeat("a", maxTokenResponse) + `"}`))
			}, wantCode: verdict.HTTPBadResponse, wantRole: verdict.RoleAuth, wantSum: fmt.Sprintf("exceeded %d bytes", maxTokenResponse)},
		{name: "200 without a token", challenge: `Bearer realm="https://auth.hostile.test:%s/token"`,
			auth:     func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"expires_in":60}`)) },
			wantCode: verdict.HTTPBadResponse, wantRole: verdict.RoleAuth, wantSum: "without a token"},
		{name: "an OAuth2 answer with only token is no token, as in containerd", challenge: `Bearer realm="https://auth.hostile.test:%s/token"`,
			auth: func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					t.Errorf("token request %s, want containerd's OAuth2 POST first", r.Method)
				}
				w.Write([]byte(`{"token":"` + good + `"}`))
			}, wantCode: verdict.HTTPBadResponse, wantSum: "without a token"},
		{name: "POST answered 404: GET with Basic credentials, as in containerd", challenge: `Bearer realm="https://auth.hostile.test:%s/token"`,
			auth: func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					http.NotFound(w, r)
					return
				}
				if _, p, ok := r.BasicAuth(); !ok || p != "pw-secret" {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				w.Write([]byte(`{"token":"` + good + `"}`))
			}, wantCode: verdict.OK},
		{name: "POST answered 403: no fallback, the scope is refused", challenge: `Bearer realm="https://auth.hostile.test:%s/token"`,
			auth: func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					w.WriteHeader(http.StatusForbidden)
					return
				}
				w.Write([]byte(`{"token":"` + good + `"}`))
			}, wantCode: verdict.AuthForbidden, wantRole: verdict.RoleAuth},
		{name: "access_token wins over token, as in containerd", challenge: `Bearer realm="https://auth.hostile.test:%s/token"`,
			auth: func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(`{"token":"stale-token","access_token":"` + good + `"}`))
			},
			wantCode: verdict.OK},
		{name: "unterminated realm quote is no realm", challenge: `Bearer realm="https://auth.hostile.test:%s/token`,
			auth: func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"token":"` + good + `"}`)) }, wantCode: verdict.ChallengeInvalid},
		{name: "unquoted realm is cut at the colon", challenge: `Bearer realm=https://auth.hostile.test:%s/token`,
			auth: func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"token":"` + good + `"}`)) }, wantCode: verdict.ChallengeInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]string{}
			auth := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				cred := r.Header.Get("Authorization")
				if r.Method == http.MethodPost && r.ParseForm() == nil && r.PostForm.Get("password") != "" {
					cred = "form password " + r.PostForm.Get("password")
				}
				mu.Lock()
				seen[strings.Split(r.Host, ":")[0]+r.URL.Path] = cred
				mu.Unlock()
				tt.auth(w, r)
			}))
			defer auth.Close()
			reg := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer "+good {
					w.Header().Set("WWW-Authenticate", fmt.Sprintf(tt.challenge, portOf(auth.Listener.Addr().String())))
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				if r.URL.Path == "/v2/" || img.serve(w, r) {
					return
				}
				http.NotFound(w, r)
			}))
			defer reg.Close()
			hosts := hostsFile(t, "auth.hostile.test", "other.hostile.test")
			rep := probeLoopback(t, strings.TrimPrefix(reg.URL, "https://"), func(o *Options) {
				o.Net.HostsFile = hosts
				o.Username, o.Password = "u", "pw-secret"
			})
			v := rep.Verdict
			if tt.wantCode != "" && v.Code != tt.wantCode {
				t.Fatalf("verdict = %s (%s), want %s", v.Code, v.Summary, tt.wantCode)
			}
			if tt.wantRole != "" && v.Role != tt.wantRole {
				t.Errorf("verdict role = %s (%s %s), want %s", v.Role, v.Code, v.Summary, tt.wantRole)
			}
			if tt.wantCode == "" && v.Condition != verdict.ConditionEndpointSet { // a network failure of the token host
				t.Errorf("verdict condition = %s (%s), want endpoint-set", v.Condition, v.Code)
			}
			if !strings.Contains(v.Summary, tt.wantSum) {
				t.Errorf("summary = %q, want it to say %q", v.Summary, tt.wantSum)
			}
			if strings.Contains(v.Summary, "pw-secret") {
				t.Errorf("summary holds the password: %q", v.Summary)
			}
			if tt.check != nil {
				mu.Lock()
				tt.check(t, seen)
				mu.Unlock()
			}
			if strings.Contains(tt.name, "another host") {
				found := false
				for _, e := range rep.Endpoints {
					found = found || e.Host == "other.hostile.test" && e.Role == verdict.RoleAuth && e.Resolve != nil && e.TLS != nil
				}
				if !found {
					t.Errorf("other.hostile.test was not walked as an auth endpoint (resolve, connect, TLS): %+v", rep.Endpoints)
				}
			}
		})
	}
}

func portOf(hostport string) string {
	i := strings.LastIndexByte(hostport, ':')
	return hostport[i+1:]
}
