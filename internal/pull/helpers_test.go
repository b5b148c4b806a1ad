package pull

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// testImage is a small valid single-platform image.
type testImage struct {
	config, layer, manifest []byte
}

func newTestImage() testImage {
	config := []byte(`{"architecture":"amd64","os":"linux"}`)
	layer := []byte(strings.Repeat("layer bytes ", 100))
	manifest := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",` +
		`"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"` + sha(config) + `","size":` + itoa(len(config)) + `},` +
		`"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"` + sha(layer) + `","size":` + itoa(len(layer)) + `}]}`)
	return testImage{config: config, layer: layer, manifest: manifest}
}

// serve answers the manifest and blob requests of repository "app", tag
// v1; false when the path is none of them.
func (img testImage) serve(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case "/v2/app/manifests/v1", "/v2/app/manifests/" + sha(img.manifest):
		w.Header().Set("Content-Type", mtOCIManifest)
		w.Write(img.manifest)
	case "/v2/app/blobs/" + sha(img.config):
		w.Write(img.config)
	case "/v2/app/blobs/" + sha(img.layer):
		w.Write(img.layer)
	default:
		return false
	}
	return true
}

// hostsFile writes a hosts file naming 127.0.0.1 with names.
func hostsFile(t *testing.T, names ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(p, []byte("127.0.0.1 "+strings.Join(names, " ")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// probeLoopback probes host/app:v1 with loopback-only DNS (a nameserver
// that refuses), short budgets, and mut applied.
func probeLoopback(t *testing.T, host string, mut func(*Options)) *report.ProbeReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := Options{
		Image: host + "/app:v1", Platform: "linux/amd64",
		Net:         netcheck.Config{Nameservers: []string{"127.0.0.1:1"}, DNSTimeout: 300 * time.Millisecond, ConnectTimeout: time.Second, TLSTimeout: 2 * time.Second},
		HTTPTimeout: 2 * time.Second, StallTimeout: 2 * time.Second,
	}
	if mut != nil {
		mut(&o)
	}
	rep, err := Probe(ctx, o)
	if err != nil {
		t.Fatalf("Probe(%s) error: %v", o.Image, err)
	}
	return rep
}

// hasWarning says whether rep warns with code c.
func hasWarning(rep *report.ProbeReport, c verdict.Code) bool {
	for _, w := range rep.Warnings {
		if w.Code == c {
			return true
		}
	}
	return false
}
