package pull

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Hostile and broken registries: real TLS servers on loopback whose
// handlers answer what no healthy registry would. Each must give a clear
// verdict within its budget, never a panic or a hang.
func TestProbeHostileRegistries(t *testing.T) {
	const repo = "/v2/app/manifests/v1"
	challenge := func(w http.ResponseWriter) {
		w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		w.WriteHeader(http.StatusUnauthorized)
	}
	tests := []struct {
		name     string
		handler  http.HandlerFunc
		wantCode verdict.Code
	}{
		{"401 without a challenge", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) }, verdict.ChallengeInvalid},
		{"no registry API at /v2/", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, verdict.HTTPBadResponse},
		{"rate limited", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v2/" {
				return
			}
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"errors":[{"code":"TOOMANYREQUESTS","message":"You have reached your pull rate limit."}]}`))
		}, verdict.RateLimited},
		{"server error", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) }, verdict.RegistryServerError},
		{"garbage manifest", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == repo {
				w.Write([]byte("<html>captive portal</html>"))
			}
		}, verdict.ManifestInvalid},
		{"manifest over the size limit", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == repo {
				w.Write([]byte(`{"schemaVersion":2,"x":"`))
				w.Write([]byte(strings.Repeat("a", maxManifestSize)))
			}
		}, verdict.ManifestTooLarge},
		{"manifest digest header lies", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == repo {
				w.Header().Set("Docker-Content-Digest", "sha256:0000000000000000000000000000000000000000000000000000000000000000")
				w.Write([]byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json"}`))
			}
		}, verdict.BlobDigestMismatch},
		{"repository unknown", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == repo {
				w.WriteHeader(http.StatusNotFound)
				w.Write([]byte(`{"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known to registry"}]}`))
			}
		}, verdict.RepositoryNotFound},
		{"basic credentials refused", func(w http.ResponseWriter, r *http.Request) { challenge(w) }, verdict.RegistryUnauthorized},
		{"denied", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == repo {
				w.WriteHeader(http.StatusForbidden)
				w.Write([]byte(`{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}`))
			}
		}, verdict.RegistryForbidden},
		{"bearer realm is not a URL", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="::not a url",service="x"`)
			w.WriteHeader(http.StatusUnauthorized)
		}, verdict.ChallengeInvalid},
		{"server never answers", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, verdict.HTTPTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(tt.handler)
			defer srv.Close()
			image := strings.TrimPrefix(srv.URL, "https://") + "/app:v1"
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			rep, err := Probe(ctx, Options{
				Image: image, Platform: "linux/amd64", Username: "u", Password: "p",
				Net:         netcheck.Config{Nameservers: []string{"127.0.0.1:1"}, ConnectTimeout: time.Second},
				HTTPTimeout: 700 * time.Millisecond,
			})
			if err != nil {
				t.Fatalf("Probe(%s) error: %v", image, err)
			}
			if rep.Verdict.Code != tt.wantCode {
				t.Fatalf("verdict = %s (%s), want %s", rep.Verdict.Code, rep.Verdict.Summary, tt.wantCode)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("verdict took %s, want it within the budgets", el)
			}
			if strings.Contains(rep.Verdict.Summary, "\n") {
				t.Errorf("summary spans lines: %q", rep.Verdict.Summary)
			}
		})
	}
}

// A registry that serves a valid manifest and then misbehaves on blobs.
func TestProbeHostileBlobs(t *testing.T) {
	config := []byte(`{"architecture":"amd64","os":"linux"}`)
	layer := []byte(strings.Repeat("layer bytes ", 100))
	manifest := func(layerSize int) []byte {
		return []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",` +
			`"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"` + sha(config) + `","size":` + itoa(len(config)) + `},` +
			`"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"` + sha(layer) + `","size":` + itoa(layerSize) + `}]}`)
	}
	tests := []struct {
		name      string
		layerSize int // the size the manifest announces
		blob      http.HandlerFunc
		wantCode  verdict.Code
	}{
		{"blob missing", len(layer), func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry"}]}`))
		}, verdict.BlobNotFound},
		{"size differs from the manifest", len(layer) + 7, func(w http.ResponseWriter, r *http.Request) { w.Write(layer) }, verdict.BlobSizeMismatch},
		{"redirect without a Location", len(layer), func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTemporaryRedirect) }, verdict.RedirectInvalid},
		{"healthy", len(layer), func(w http.ResponseWriter, r *http.Request) { w.Write(layer) }, verdict.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/v2/":
				case r.URL.Path == "/v2/app/manifests/v1":
					w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
					w.Write(manifest(tt.layerSize))
				case r.URL.Path == "/v2/app/blobs/"+sha(config):
					w.Write(config)
				default:
					tt.blob(w, r)
				}
			}))
			defer srv.Close()
			rep, err := Probe(context.Background(), Options{
				Image: strings.TrimPrefix(srv.URL, "https://") + "/app:v1", Platform: "linux/amd64",
				Net: netcheck.Config{Nameservers: []string{"127.0.0.1:1"}}, HTTPTimeout: 2 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict.Code != tt.wantCode {
				t.Fatalf("verdict = %s (%s), want %s", rep.Verdict.Code, rep.Verdict.Summary, tt.wantCode)
			}
			// a loopback IP registry is verified like containerd does it: not at all
			if !hasWarning(rep, verdict.TLSVerifySkipped) {
				t.Errorf("warnings = %+v, want TLS_VERIFY_SKIPPED for a loopback registry", rep.Warnings)
			}
		})
	}
}

// containerd falls back to plain HTTP for a loopback registry that does not
// speak TLS; so does the walk, and says so.
func TestProbePlainHTTPFallback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`))
		}
	}))
	defer srv.Close()
	rep, err := Probe(context.Background(), Options{
		Image: strings.TrimPrefix(srv.URL, "http://") + "/app:v1", Platform: "linux/amd64",
		Net: netcheck.Config{Nameservers: []string{"127.0.0.1:1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict.Code != verdict.ManifestNotFound || !hasWarning(rep, verdict.PlainHTTP) {
		t.Fatalf("verdict = %s, warnings %+v; want MANIFEST_NOT_FOUND over plain HTTP with PLAIN_HTTP", rep.Verdict.Code, rep.Warnings)
	}
}

func sha(b []byte) string { return digest.FromBytes(b).String() }
func itoa(n int) string   { return strconv.Itoa(n) }
