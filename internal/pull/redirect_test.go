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

// Registry requests follow redirects as containerd's registry client does
// (Go's client under core/remotes/docker/resolver.go request.do): 301, 302,
// 303, 307 and 308, 9 at most, each new host walked as an endpoint, the
// registry's Authorization to the registry host only. Other 3xx are
// answers, and fail as containerd fails them.
func TestProbeRegistryRedirects(t *testing.T) {
	img := newTestImage()
	const manifestPath = "/v2/app/manifests/v1"
	layerPath := "/v2/app/blobs/" + sha(img.layer)
	tests := []struct {
		name     string
		handle   func(w http.ResponseWriter, r *http.Request, other string) bool // true: handled
		wantCode verdict.Code
		wantSum  string
		check    func(t *testing.T, seen map[string]string)
	}{
		{name: "manifest redirected to another host: walked, no Authorization there", handle: func(w http.ResponseWriter, r *http.Request, other string) bool {
			if r.URL.Path == manifestPath && !strings.HasPrefix(r.Host, "cdn.") {
				http.Redirect(w, r, other+"/m", http.StatusTemporaryRedirect)
				return true
			}
			if r.URL.Path == "/m" {
				w.Header().Set("Content-Type", mtOCIManifest)
				w.Write(img.manifest)
				return true
			}
			return false
		}, wantCode: verdict.OK, check: func(t *testing.T, seen map[string]string) {
			if a := seen["cdn.hostile.test/m"]; a != "" {
				t.Errorf("the other host got the registry's Authorization %q", a)
			}
		}},
		{name: "/v2/ redirected on the same host", handle: func(w http.ResponseWriter, r *http.Request, other string) bool {
			if r.URL.Path == "/v2/" {
				http.Redirect(w, r, "/v2/ping-here", http.StatusMovedPermanently)
				return true
			}
			return r.URL.Path == "/v2/ping-here"
		}, wantCode: verdict.OK},
		{name: "manifest redirecting forever stops at containerd's limit", handle: func(w http.ResponseWriter, r *http.Request, other string) bool {
			if strings.HasPrefix(r.URL.Path, manifestPath) {
				http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
				return true
			}
			return false
		}, wantCode: verdict.RedirectLoop, wantSum: "still redirecting after 9 redirects, containerd's limit"},
		{name: "300 Multiple Choices is an answer, not a redirect", handle: func(w http.ResponseWriter, r *http.Request, other string) bool {
			if r.URL.Path == layerPath {
				w.Header().Set("Location", layerPath+"?again")
				w.WriteHeader(http.StatusMultipleChoices)
				return true
			}
			return false
		}, wantCode: verdict.HTTPBadResponse, wantSum: "300"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]string{}
			var other string
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen[strings.Split(r.Host, ":")[0]+r.URL.Path] = r.Header.Get("Authorization")
				mu.Unlock()
				if strings.HasPrefix(r.Host, "127.") && r.Header.Get("Authorization") != "Basic dTpwdy1zZWNyZXQ=" {
					w.Header().Set("WWW-Authenticate", `Basic realm="reg"`)
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				if tt.handle(w, r, other) || r.URL.Path == "/v2/" || img.serve(w, r) {
					return
				}
				http.NotFound(w, r)
			}))
			defer srv.Close()
			other = "https://cdn.hostile.test:" + portOf(srv.Listener.Addr().String())
			hosts := hostsFile(t, "cdn.hostile.test")
			rep := probeLoopback(t, strings.TrimPrefix(srv.URL, "https://"), func(o *Options) {
				o.Net.HostsFile = hosts
				o.Username, o.Password = "u", "pw-secret"
			})
			if rep.Verdict.Code != tt.wantCode {
				t.Fatalf("verdict = %s (%s), want %s", rep.Verdict.Code, rep.Verdict.Summary, tt.wantCode)
			}
			if !strings.Contains(rep.Verdict.Summary, tt.wantSum) {
				t.Errorf("summary = %q, want it to say %q", rep.Verdict.Summary, tt.wantSum)
			}
			if tt.check != nil {
				mu.Lock()
				tt.check(t, seen)
				mu.Unlock()
				found := false
				for _, e := range rep.Endpoints {
					found = found || e.Host == "cdn.hostile.test" && e.TLS != nil
				}
				if !found {
					t.Errorf("cdn.hostile.test was not walked as an endpoint: %s", fmt.Sprint(rep.Endpoints))
				}
			}
		})
	}
}
