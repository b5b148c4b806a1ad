package printers

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
)

// Pulls waiting in a node's kubelet queue print in their own section, with
// or without pull failures beside them.
func TestPrintExplainWaits(t *testing.T) {
	w := report.ExplainWait{Node: "n1", Pod: "shop/web", Image: "docker.io/library/nginx:1.27",
		Summary: "shop/web asked for docker.io/library/nginx:1.27 at 2026-12-07T10:00:30Z and has no result yet, while shop/trainer's pull is still open on n1"}
	for _, r := range []*report.ExplainReport{
		{Source: "file events.json (events-json)", Summary: report.ExplainSummary{Messages: 3}, Waits: []report.ExplainWait{w}},
		{Source: "file events.json (events-json)", Summary: report.ExplainSummary{Messages: 4, Failures: 1, DominantCondition: "dns", ExitCode: 4},
			Findings: []report.ExplainFinding{{Code: "DNS_NXDOMAIN", Summary: "the node's resolver says the name does not exist"}}, Waits: []report.ExplainWait{w}},
	} {
		var b strings.Builder
		if err := Print(&b, "text", r, Options{}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range []string{"WAITING BEHIND OTHER PULLS", w.Summary} {
			if !strings.Contains(out, want) {
				t.Errorf("text (failures %d) lacks %q:\n%s", r.Summary.Failures, want, out)
			}
		}
	}
}
