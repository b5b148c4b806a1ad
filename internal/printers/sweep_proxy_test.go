package printers

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
)

// TestSweepPrintsEachNodesProxy: the text report says how each node's walk
// went with its containerd's proxy, and where the settings came from,
// when the nodes went different ways; not when they all went alike
// (unless -o wide).
func TestSweepPrintsEachNodesProxy(t *testing.T) {
	via := "proxy 10.0.40.10:3128 (HTTPS_PROXY in /etc/systemd/system/containerd.service.d/http-proxy.conf:3 (Environment=)), from the files of containerd.service"
	walked := func(name, proxy string) report.SweepNode {
		return report.SweepNode{PlannedNode: report.PlannedNode{Name: name}, Status: report.SweepOK, Probe: &report.SweepResult{Status: report.SweepOK, Source: report.SourceProbe, Proxy: proxy}}
	}
	print := func(wide bool, nodes ...report.SweepNode) string {
		var b bytes.Buffer
		if err := Print(&b, "text", &report.SweepReport{Nodes: nodes}, Options{Wide: wide}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	out := print(false, walked("ng-proxy-1", via), walked("ng-new-1", ""))
	for _, want := range []string{"  ng-proxy-1: " + via + "\n", "  ng-new-1: direct: no proxy setting in containerd's environment or files\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	if out := print(false, walked("a", via), walked("b", via)); strings.Contains(out, "http-proxy.conf") {
		t.Errorf("every node through the same proxy: want no proxy lines without -o wide:\n%s", out)
	}
	if out := print(true, walked("a", via), walked("b", via)); strings.Count(out, "http-proxy.conf") != 2 {
		t.Errorf("-o wide: want each node's proxy line:\n%s", out)
	}
}
