package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

var update = flag.Bool("update", false, "rewrite docs/verdicts.md")

const docsPath = "../../docs/verdicts.md"

// helpOf returns `pullpath ARGS --help`.
func helpOf(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), append(append([]string{"pullpath"}, args...), "--help"), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code != 0 {
		t.Fatalf("pullpath %v --help = exit %d: %s", args, code, errOut.String())
	}
	return out.String()
}

// helpCodes reads the exit-code lines of a help text: "  N  ..." with N a
// number and, for a condition's code, the condition's name next.
func helpCodes(help string) map[int]string {
	got := map[int]string{}
	for _, m := range regexp.MustCompile(`(?m)^  (\d+)  (\S+)`).FindAllStringSubmatch(help, -1) {
		n, _ := strconv.Atoi(m[1])
		got[n] = m[2]
	}
	return got
}

func TestExitTableMatchesHelp(t *testing.T) {
	root := helpCodes(helpOf(t))
	if len(root) != len(exitTable) {
		t.Errorf("pullpath --help lists %d exit codes %v, the table has %d", len(root), root, len(exitTable))
	}
	for _, r := range exitTable {
		word, ok := root[r.Code]
		switch {
		case !ok:
			t.Errorf("pullpath --help does not list exit code %d", r.Code)
		case r.Condition != "" && word != string(r.Condition):
			t.Errorf("pullpath --help: exit %d is %q, the table says %q", r.Code, word, r.Condition)
		}
	}
	probe := helpCodes(helpOf(t, "probe"))
	for _, r := range exitTable {
		if r.Condition != "" && probe[r.Code] != string(r.Condition) {
			t.Errorf("pullpath probe --help: exit %d is %q, the table says %q", r.Code, probe[r.Code], r.Condition)
		}
	}
	explain := helpOf(t, "explain")
	for _, r := range exitTable {
		if r.Condition != "" && !strings.Contains(explain, strconv.Itoa(r.Code)+" "+string(r.Condition)) {
			t.Errorf("pullpath explain --help does not say %d %s", r.Code, r.Condition)
		}
	}
	for _, args := range [][]string{{"lab", "run"}, {"lab", "test"}} {
		if h := helpOf(t, args...); !strings.Contains(h, strconv.Itoa(exitMismatch)+" when") {
			t.Errorf("pullpath %v --help does not give the mismatch exit code %d", args, exitMismatch)
		}
	}
}

func TestExitForReport(t *testing.T) {
	fail := func(c verdict.Condition) verdict.Verdict {
		return verdict.Verdict{Status: verdict.StatusFail, Condition: c}
	}
	ok := verdict.Verdict{Status: verdict.StatusOK}
	tests := []struct {
		name    string
		rep     any
		want    int
		wantErr string
	}{
		{"probe ok", &report.ProbeReport{Verdict: ok}, 0, ""},
		{"probe route", &report.ProbeReport{Verdict: fail(verdict.ConditionRoute)}, 3, ""},
		{"probe registry", &report.ProbeReport{Verdict: fail(verdict.ConditionRegistry)}, 8, ""},
		{"probe no direction", &report.ProbeReport{Verdict: fail(verdict.ConditionNone)}, 2, ""},
		{"explain: the code explain.Summarize recorded", &report.ExplainReport{Summary: report.ExplainSummary{Failures: 2, DominantCondition: verdict.ConditionDNS, ExitCode: 4}}, 4, ""},
		{"sweep: the code its judge recorded", &report.SweepReport{Verdict: report.SweepVerdict{Status: verdict.StatusFail, Failed: 1, ExitCode: 5}}, 5, ""},
		{"diagnose: the answer's code", &report.DiagnoseReport{Answer: report.DiagnoseAnswer{Status: report.AnswerBroken, Exit: 6}}, 6, ""},
		{"monitor status: the summary's code", &report.MonitorFleetReport{Summary: report.MonitorFleetSummary{Failing: 1, ExitCode: 4}}, 4, ""},
		{"audit pass", &report.AuditReport{Verdict: report.AuditVerdict{Status: report.StepPass}}, 0, ""},
		{"audit route", &report.AuditReport{Verdict: report.AuditVerdict{Status: report.StepFail, Condition: verdict.ConditionRoute}}, 3, ""},
		{"lab run mismatch: lab.ExitCode's policy", &report.LabReport{Mode: report.LabModeRun, Runs: []*report.LabRun{{Result: report.LabMismatch, ExitCode: 3}}}, 9, ""},
		{"lab run error", &report.LabReport{Mode: report.LabModeRun, Runs: []*report.LabRun{{Result: report.LabError, Error: "no nft"}}}, 1, "no nft"},
		{"unknown kind", struct{}{}, 1, "no exit policy for a struct {}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := exitForReport(tt.rep)
			if got != tt.want || (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("exitForReport = %d, %v; want %d, %q", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// finish exits with the report's code and writes nothing into the report,
// nor into the reports it holds: each engine recorded its own.
func TestFinishExitsWithTheRecordedCode(t *testing.T) {
	o := &output{format: "json"}
	r := &report.ExplainReport{Findings: []report.ExplainFinding{{Code: verdict.TLSUnknownAuthority, Condition: verdict.ConditionTLSIdentity}}}
	explain.Summarize(r)
	var out bytes.Buffer
	err := o.finish(&out, r)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 6 || ee.Err != nil {
		t.Fatalf("finish(explain tls-identity) = %v, want exit 6 with no message", err)
	}
	if !strings.Contains(out.String(), `"exitCode": 6`) {
		t.Errorf("the printed report does not say exit 6: %s", out.String())
	}
	// The nested explain report says 0 here, which no policy would give
	// it: finish must leave it as its engine left it.
	d := &report.DiagnoseReport{Answer: report.DiagnoseAnswer{Status: report.AnswerBroken, Condition: verdict.ConditionRoute, Exit: 3},
		Explain: &report.ExplainReport{Summary: report.ExplainSummary{Failures: 1, DominantCondition: verdict.ConditionDNS}}}
	if err := o.finish(&bytes.Buffer{}, d); !errors.As(err, &ee) || ee.Code != 3 {
		t.Errorf("finish(diagnose route) = %v, want exit 3", err)
	}
	if d.Explain.Summary.ExitCode != 0 {
		t.Errorf("finish wrote exit %d into the diagnosis's explain report", d.Explain.Summary.ExitCode)
	}
	run := &report.LabRun{Result: report.LabPass, Probe: &report.ProbeReport{Verdict: verdict.Verdict{Status: verdict.StatusFail, Condition: verdict.ConditionDNS}}, ExitCode: 4}
	lr := report.NewLabReport(report.LabModeTest)
	lr.Runs = []*report.LabRun{run}
	lr.Finish(1)
	if err := o.finish(&bytes.Buffer{}, lr); err != nil || run.ExitCode != 4 {
		t.Errorf("finish(lab test) = %v, run exit %d; want nil, 4 (as the lab runner recorded it)", err, run.ExitCode)
	}
	if err := o.finish(&bytes.Buffer{}, &report.ProbeReport{Verdict: verdict.Verdict{Status: verdict.StatusOK}}); err != nil {
		t.Errorf("finish(probe ok) = %v, want nil", err)
	}
}

// TestDocs keeps docs/verdicts.md equal to the codes table and the exit
// table (-update rewrites it).
func TestDocs(t *testing.T) {
	want := verdict.Markdown(exitMarkdown())
	if *update {
		if err := os.WriteFile(docsPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatalf("reading %s: %v (run go test ./internal/cli -run TestDocs -update)", docsPath, err)
	}
	if string(got) != want {
		t.Errorf("%s is out of date with internal/verdict/codes.go or internal/exitcode: run go test ./internal/cli -run TestDocs -update", docsPath)
	}
	// every code of the table appears in the docs exactly once as a row
	for _, i := range verdict.Codes {
		re := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(string(i.Code)) + "` \\|")
		if n := len(re.FindAllString(string(got), -1)); n != 1 {
			t.Errorf("docs row for %s appears %d times, want 1", i.Code, n)
		}
	}
	for _, r := range exitTable {
		if !regexp.MustCompile(`(?m)^\| ` + strconv.Itoa(r.Code) + ` \| ?` + string(r.Condition) + ` ?\|`).MatchString(string(got)) {
			t.Errorf("docs lack the exit row for %d", r.Code)
		}
	}
}
