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

// Manifests and indexes as containerd checks them (core/images/image.go
// validateMediaType, core/images/mediatypes.go, core/images/handlers.go):
// the media type is the Content-Type of the answer for the root and the
// descriptor's for an index entry; only the four image types are walked;
// a body that contradicts its type fails; nested indexes are walked.
func TestProbeManifestMediaTypes(t *testing.T) {
	img := newTestImage()
	type doc struct{ contentType, body string }
	index := func(entries ...string) string {
		return `{"schemaVersion":2,"mediaType":"` + mtOCIIndex + `","manifests":[` + strings.Join(entries, ",") + `]}`
	}
	entry := func(mt, body, platform string) string {
		e := fmt.Sprintf(`{"mediaType":%q,"digest":%q,"size":%d`, mt, sha([]byte(body)), len(body))
		if platform != "" {
			os, arch, _ := strings.Cut(platform, "/")
			e += fmt.Sprintf(`,"platform":{"os":%q,"architecture":%q}`, os, arch)
		}
		return e + "}"
	}
	manifest := string(img.manifest)
	nested := index(entry(mtOCIManifest, manifest, "linux/amd64"))
	chain := func(n int) (string, []string) { // n indexes, each the only entry of the one before
		inner := nested
		all := []string{inner}
		for i := 1; i < n; i++ {
			inner = index(entry(mtOCIIndex, inner, ""))
			all = append(all, inner)
		}
		return inner, all
	}
	deep8, chain8 := chain(8)
	deep9, chain9 := chain(9)
	tests := []struct {
		name     string
		root     doc
		children []string // bodies served by digest
		wantCode verdict.Code
		wantSum  string
	}{
		{"image manifest", doc{mtOCIManifest, manifest}, nil, verdict.OK, ""},
		{"Content-Type with parameters", doc{mtOCIManifest + "; charset=utf-8", manifest}, nil, verdict.OK, ""},
		{"unknown Content-Type", doc{"application/json", manifest}, nil, verdict.ManifestInvalid, `media type "application/json", which containerd does not pull`},
		{"no Content-Type", doc{"", manifest}, nil, verdict.ManifestInvalid, `media type ""`},
		{"schema 1 as text/plain", doc{"text/plain", `{"schemaVersion":1,"fsLayers":[{"blobSum":"x"}]}`}, nil, verdict.ManifestInvalid, "schema 1"},
		{"Content-Type manifest, body index", doc{mtOCIManifest, nested}, []string{manifest}, verdict.ManifestInvalid, "expected manifest but found index"},
		{"Content-Type index, body manifest", doc{mtOCIIndex, manifest}, nil, verdict.ManifestInvalid, "expected index but found manifest"},
		{"body mediaType field unknown, Content-Type a manifest (containerd reads the header)", doc{mtDockerManifest, strings.Replace(manifest, mtOCIManifest, "application/x-unknown", 1)}, nil, verdict.OK, ""},
		{"index entry of an unknown media type", doc{mtOCIIndex, index(entry("application/vnd.example+json", manifest, "linux/amd64"))}, []string{manifest}, verdict.ManifestInvalid, `media type "application/vnd.example+json"`},
		{"index entry whose body is an index", doc{mtOCIIndex, index(entry(mtOCIManifest, nested, "linux/amd64"))}, []string{nested}, verdict.ManifestInvalid, "expected manifest but found index"},
		{"nested index without a platform is walked", doc{mtOCIIndex, index(entry(mtOCIIndex, nested, ""))}, []string{nested, manifest}, verdict.OK, ""},
		{"the platform's entry goes before an entry without one", doc{mtOCIIndex, index(entry(mtOCIIndex, "{}", ""), entry(mtOCIManifest, manifest, "linux/amd64"))}, []string{manifest}, verdict.OK, ""},
		{"indexes nested 8 deep are walked", doc{mtOCIIndex, deep8}, append(chain8, manifest), verdict.OK, ""},
		{"indexes nested 9 deep stop at the probe's limit", doc{mtOCIIndex, deep9}, append(chain9, manifest), verdict.ManifestInvalid, "nested 8 deep, the probe's limit"},
		{"no entry for the platform", doc{mtOCIIndex, index(entry(mtOCIManifest, manifest, "linux/s390x"))}, []string{manifest}, verdict.PlatformNotFound, "linux/s390x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			byDigest := map[string]string{}
			for _, c := range tt.children {
				byDigest["/v2/app/manifests/"+sha([]byte(c))] = c
			}
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/v2/":
				case r.URL.Path == "/v2/app/manifests/v1":
					w.Header()["Content-Type"] = nil // no sniffing: the header is what the case says
					if tt.root.contentType != "" {
						w.Header().Set("Content-Type", tt.root.contentType)
					}
					w.Write([]byte(tt.root.body))
				case byDigest[r.URL.Path] != "":
					w.Header().Set("Content-Type", "application/octet-stream") // ignored for an entry: its descriptor says
					w.Write([]byte(byDigest[r.URL.Path]))
				case img.serve(w, r):
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			rep := probeLoopback(t, strings.TrimPrefix(srv.URL, "https://"), nil)
			if rep.Verdict.Code != tt.wantCode {
				t.Fatalf("verdict = %s (%s), want %s", rep.Verdict.Code, rep.Verdict.Summary, tt.wantCode)
			}
			if !strings.Contains(rep.Verdict.Summary, tt.wantSum) {
				t.Errorf("summary = %q, want it to say %q", rep.Verdict.Summary, tt.wantSum)
			}
		})
	}
}

// The manifest requests carry containerd's Accept headers: its resolve
// list for the root (core/remotes/docker/resolver.go), the entry's media
// type then */* for an index entry (core/remotes/docker/fetcher.go).
func TestProbeManifestAccept(t *testing.T) {
	img := newTestImage()
	idx := `{"schemaVersion":2,"mediaType":"` + mtOCIIndex + `","manifests":[{"mediaType":"` + mtDockerManifest + `","digest":"` + sha(img.manifest) + `","size":` + itoa(len(img.manifest)) + `,"platform":{"os":"linux","architecture":"amd64"}}]}`
	var mu sync.Mutex
	accept := map[string]string{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/manifests/") {
			mu.Lock()
			accept[r.URL.Path] = r.Header.Get("Accept")
			mu.Unlock()
		}
		switch {
		case r.URL.Path == "/v2/":
		case r.URL.Path == "/v2/app/manifests/v1":
			w.Header().Set("Content-Type", mtOCIIndex)
			w.Write([]byte(idx))
		case img.serve(w, r):
		}
	}))
	defer srv.Close()
	rep := probeLoopback(t, strings.TrimPrefix(srv.URL, "https://"), nil)
	if rep.Verdict.Code != verdict.OK {
		t.Fatalf("verdict = %s (%s), want OK", rep.Verdict.Code, rep.Verdict.Summary)
	}
	want := map[string]string{
		"/v2/app/manifests/v1":                   "application/vnd.docker.distribution.manifest.v2+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, */*",
		"/v2/app/manifests/" + sha(img.manifest): mtDockerManifest + ", */*",
	}
	mu.Lock()
	defer mu.Unlock()
	for path, w := range want {
		if accept[path] != w {
			t.Errorf("Accept of %s = %q, want containerd's %q", path, accept[path], w)
		}
	}
}
