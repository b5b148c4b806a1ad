package pull

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// docs/verdicts.md states the limits the probe applies; keep it equal to
// the constants the walk uses.
func TestLimitsDocumented(t *testing.T) {
	for _, want := range []string{
		itoa(MaxRedirects) + " followed, the 10th stops",
		"4,393,216 bytes",
		itoa(maxIndexDepth) + " indexes",
		"1 MiB read limit",
		mtOCIManifest, mtDockerManifest, mtOCIIndex, mtDockerList,
	} {
		if !strings.Contains(verdict.ProbeLimits, want) {
			t.Errorf("verdict.ProbeLimits does not say %q", want)
		}
	}
	if maxManifestSize != 4393216 || maxTokenResponse != 1<<20 || MaxRedirects+1 != 10 {
		t.Errorf("limits changed (manifest %d, token %d, redirects %d): update verdict.ProbeLimits", maxManifestSize, maxTokenResponse, MaxRedirects)
	}
}

// A hosts file with one junk line is read the way glibc and Go read it:
// the line is skipped, the warning names it, the pull goes on.
func TestProbeHostsFileJunkLine(t *testing.T) {
	img := newTestImage()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/" || img.serve(w, r) {
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	hosts := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(hosts, []byte("127.0.0.1 localhost\nthis-is-not-an-address registry.example.com\n127.0.0.1 registry.example.com\n"), 0o644)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	rep := probeLoopback(t, "registry.example.com:"+portOf(srv.Listener.Addr().String()), func(o *Options) {
		o.Net.HostsFile, o.ExtraCAs = hosts, []string{ca}
	})
	if rep.Verdict.Code != verdict.OK {
		t.Fatalf("verdict = %s (%s), want OK: one junk line must not stop the walk", rep.Verdict.Code, rep.Verdict.Summary)
	}
	found := false
	for _, w := range rep.Warnings {
		found = found || w.Code == verdict.HostsFileLine && strings.Contains(w.Message, "line 2 skipped") && strings.Contains(w.Message, hosts)
	}
	if !found {
		t.Errorf("warnings = %+v, want HOSTS_FILE_LINE_SKIPPED naming %s line 2", rep.Warnings, hosts)
	}
}
