package labhook

import (
	"os"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
)

// TestReadChain reads a real containerd 1.6 debug log of a pull through a
// pull-through cache (recorded by lab run mirror-cache-healthy --runtime
// containerd), then the same log with the cache's manifest HEAD failing
// and the registry answering it.
func TestReadChain(t *testing.T) {
	b, err := os.ReadFile("testdata/containerd-mirror-cache.log")
	if err != nil {
		t.Fatal(err)
	}
	const mirror, reg = "mirror.corp.example:5000", "registry.corp.example"
	got, tried := ReadChain(b)
	want := report.ServedBy{Resolve: mirror, Manifest: mirror, Blobs: mirror}
	if got != want || len(tried) != 1 || tried[0] != mirror {
		t.Errorf("ReadChain = %+v tried %v, want %+v tried [%s]", got, tried, want, mirror)
	}

	// the mirror answers the HEAD 404 (Harbor), the registry 200
	lines := strings.Split(string(b), "\n")
	var out []string
	for _, l := range lines {
		if strings.Contains(l, "/manifests/1.4.2") && strings.Contains(l, "fetch response received") {
			out = append(out, strings.Replace(l, `response.status="200 OK"`, `response.status="404 Not Found"`, 1))
			out = append(out, strings.NewReplacer(`url="https://`+mirror, `url="https://`+reg, `?ns=registry.corp.example`, ``, `host="`+mirror, `host="`+reg).Replace(strings.Replace(l, "fetch response received", "do request", 1)))
			l = strings.NewReplacer(`url="https://`+mirror, `url="https://`+reg, `host="`+mirror, `host="`+reg).Replace(l)
		}
		out = append(out, l)
	}
	got, tried = ReadChain([]byte(strings.Join(out, "\n")))
	want = report.ServedBy{Resolve: reg, Manifest: mirror, Blobs: mirror}
	if got != want || len(tried) != 2 || tried[1] != reg {
		t.Errorf("ReadChain(head 404) = %+v tried %v, want %+v tried [%s %s]", got, tried, want, mirror, reg)
	}
	if d := compareServedBy(report.ServedBy{Resolve: mirror, Manifest: mirror, Blobs: mirror}, got); len(d) != 1 || !strings.Contains(d[0], "served by (resolve): the probe says "+mirror+", containerd's log "+reg) {
		t.Errorf("compareServedBy = %q, want one line naming the resolve step", d)
	}
}

func TestLogField(t *testing.T) {
	line := `time="2026-12-02T09:25:05Z" level=debug msg="fetch response received" host="m:5000" response.status="200 OK" url="https://m:5000/v2/a/manifests/1?ns=r" x=\"q\"`
	for k, want := range map[string]string{"msg": "fetch response received", "level": "debug", "response.status": "200 OK", "url": "https://m:5000/v2/a/manifests/1?ns=r", "status": "", "nope": ""} {
		if got := logField(line, k); got != want {
			t.Errorf("logField(%q) = %q, want %q", k, got, want)
		}
	}
}
