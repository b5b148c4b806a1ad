package printers

import (
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/report"
)

func TestPrintMonitorFleet(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	r := &report.MonitorFleetReport{APIVersion: report.APIVersion, Kind: "MonitorFleetReport", Source: "Events of pullpath-monitor on Nodes (namespace default)",
		Summary: report.MonitorFleetSummary{Nodes: 3, OK: 1, Failing: 1, Unknown: 1},
		Groups: []report.MonitorGroup{
			{Pool: "general", Zone: "zone-b", Subnet: "10.0.2.0/24", Failing: 1, Nodes: []report.MonitorNodeState{{Node: "node-b", Status: "fail", Code: "BLOB_ENDPOINT_TIMEOUT", Condition: "endpoint-set", ImageHost: "reg.example.com", Message: "1 of 1 monitored images fail", At: &at}}},
			{Pool: "general", Zone: "zone-a", Subnet: "10.0.1.0/24", OK: 1, Unknown: 1, Nodes: []report.MonitorNodeState{{Node: "node-a", Status: "ok", Code: "OK", At: &at}, {Node: "node-c", Status: "unknown"}}},
		},
		Warnings: []string{"1 node(s) have no monitor Event"}}
	var b strings.Builder
	if err := Print(&b, "text", r, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"3 node(s): 1 ok, 1 failing, 1 unknown", "POOL general  ZONE zone-b  SUBNET 10.0.2.0/24  (0 ok, 1 failing, 0 unknown)",
		"node-b", "BLOB_ENDPOINT_TIMEOUT", "endpoint-set", "2026-12-01T09:00:00Z", "node-c", "warning: 1 node(s) have no monitor Event"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "zone-b") > strings.Index(out, "zone-a") {
		t.Errorf("the failing group is not first:\n%s", out)
	}
	if strings.Contains(out, "1 of 1 monitored") {
		t.Errorf("text (not wide) shows the message:\n%s", out)
	}
	b.Reset()
	if err := Print(&b, "wide", r, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "1 of 1 monitored images fail") {
		t.Errorf("wide lacks the Event message:\n%s", b.String())
	}
}
