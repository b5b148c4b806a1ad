package printers

import (
	"bytes"
	"encoding/json"
	"github.com/pullpath/pullpath/internal/report"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

func labTestReport() *report.LabReport {
	r := report.NewLabReport(report.LabModeTest)
	r.Runs = []*report.LabRun{
		{Scenario: "ecr-healthy", Result: report.LabPass, Verdict: &verdict.Verdict{Status: verdict.StatusOK, Code: verdict.OK},
			Timings: report.LabTimings{TotalMS: 1500}},
		{Scenario: "ecr-sg-drops-443", Result: report.LabMismatch,
			Verdict: &verdict.Verdict{Status: verdict.StatusFail, Condition: verdict.ConditionDNS, Cause: verdict.CauseDNS,
				Code: verdict.DNSNXDomain, Role: verdict.RoleRegistry, Stage: verdict.StageRegistry},
			Mismatches: []string{"condition: want route, got dns"}, Timings: report.LabTimings{TotalMS: 3200}},
		{Scenario: "broken", Result: report.LabError, Error: "create namespaces: permission denied"},
	}
	r.Finish(3)
	r.DurationMS = 4000
	return r
}

func TestLabReportText(t *testing.T) {
	var buf bytes.Buffer
	if err := Print(&buf, "text", labTestReport(), Options{}); err != nil {
		t.Fatalf("Print(text) = %v", err)
	}
	want := []string{
		"PASS   ecr-healthy        1.5s  ok OK",
		"FAIL   ecr-sg-drops-443   3.2s  fail dns/dns DNS_NXDOMAIN (stage registry, registry host)",
		"         condition: want route, got dns",
		"ERROR  broken             0.0s  create namespaces: permission denied",
		"3 scenarios: 1 passed, 1 mismatched, 1 errors, in 4.0s, 3 at a time",
	}
	got := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	for i := range got {
		got[i] = strings.TrimRight(got[i], " ")
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lab test text =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLabReportJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := Print(&buf, "json", labTestReport(), Options{}); err != nil {
		t.Fatalf("Print(json) = %v", err)
	}
	var back struct {
		APIVersion, Kind, Mode string
		Summary                report.LabSummary
		Runs                   []struct{ Scenario, Result string }
	}
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("json.Unmarshal = %v", err)
	}
	if back.APIVersion != report.APIVersion || back.Kind != "LabReport" || back.Mode != report.LabModeTest {
		t.Errorf("header = %s %s %s, want %s report.LabReport test", back.APIVersion, back.Kind, back.Mode, report.APIVersion)
	}
	if s := back.Summary; s.Total != 3 || s.Passed != 1 || s.Mismatch != 1 || s.Errors != 1 {
		t.Errorf("summary = %+v, want 3 total, 1 passed, 1 mismatch, 1 error", s)
	}
	if r := labTestReport(); r.OK() {
		t.Errorf("OK() = true with a mismatch and an error, want false")
	}
}
