package printers

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// printLab renders a lab report: the probe report of a single run, one line
// per scenario for a test, two columns for the demo.
func printLab(w io.Writer, r *report.LabReport, o Options) error {
	switch r.Mode {
	case report.LabModeDemo:
		return labWriteDemo(w, r, o)
	case report.LabModeRun:
		return labWriteRuns(w, r, o)
	}
	return labWriteTest(w, r, o)
}

func labSecs(msv float64) string { return fmt.Sprintf("%.1fs", msv/1000) }

func labPaint(o Options, color, s string) string {
	if !o.Color {
		return s
	}
	return color + s + "\x1b[0m"
}

const (
	labGreen  = "\x1b[32m"
	labRed    = "\x1b[31m"
	labYellow = "\x1b[33m"
)

func labResultWord(o Options, res report.LabResult) string {
	switch res {
	case report.LabPass:
		return labPaint(o, labGreen, "PASS")
	case report.LabMismatch:
		return labPaint(o, labRed, "FAIL")
	case report.LabError:
		return labPaint(o, labRed, "ERROR")
	}
	return labPaint(o, labYellow, "RAN")
}

// verdictLine is "fail route/timeout CONNECT_TIMEOUT on registry HOST".
func labVerdictLine(run *report.LabRun) string {
	v := run.Verdict
	if v == nil {
		if run.Error != "" {
			return run.Error
		}
		return "no verdict"
	}
	if v.Status == "ok" {
		s := "ok " + string(v.Code)
		if len(run.Warnings) > 0 {
			s += fmt.Sprintf(" (warnings %s)", labJoinCodes(run.Warnings))
		}
		return s
	}
	s := fmt.Sprintf("%s %s/%s %s", v.Status, v.Condition, v.Cause, v.Code)
	var at []string
	if v.Stage != "" {
		at = append(at, "stage "+string(v.Stage))
	}
	if v.Role != "" {
		at = append(at, string(v.Role)+" host")
	}
	if len(at) > 0 {
		s += " (" + strings.Join(at, ", ") + ")"
	}
	return s
}

func labJoinCodes[T ~string](cs []T) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = string(c)
	}
	return strings.Join(parts, ",")
}

func labWriteTest(w io.Writer, r *report.LabReport, o Options) error {
	width := 0
	for _, run := range r.Runs {
		width = max(width, len(run.Scenario))
	}
	for _, run := range r.Runs {
		// pad the plain word, then paint it, so colours do not skew columns
		word := map[report.LabResult]string{report.LabPass: "PASS", report.LabMismatch: "FAIL", report.LabError: "ERROR"}[run.Result]
		if word == "" {
			word = "RAN"
		}
		pad := strings.Repeat(" ", 5-len(word))
		fmt.Fprintf(w, "%s%s  %-*s  %5s  %s\n", labResultWord(o, run.Result), pad, width, run.Scenario, labSecs(run.Timings.TotalMS), labVerdictLine(run))
		indent := strings.Repeat(" ", 9)
		for _, m := range run.Mismatches {
			fmt.Fprintf(w, "%s%s\n", indent, m)
		}
		if run.Error != "" && run.Verdict != nil {
			fmt.Fprintf(w, "%s%s\n", indent, run.Error)
		}
		if o.Wide && run.Summary != "" {
			fmt.Fprintf(w, "%s%s\n", indent, run.Summary)
		}
	}
	s := r.Summary
	par := ""
	if s.Parallel > 1 {
		par = fmt.Sprintf(", %d at a time", s.Parallel)
	}
	_, err := fmt.Fprintf(w, "%d scenarios: %d passed, %d mismatched, %d errors, in %s%s\n",
		s.Total, s.Passed, s.Mismatch, s.Errors, labSecs(r.DurationMS), par)
	return err
}

func labWriteRuns(w io.Writer, r *report.LabReport, o Options) error {
	for i, run := range r.Runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "lab scenario %s", run.Scenario)
		if run.Source != "" {
			fmt.Fprintf(w, " (%s)", run.Source)
		}
		fmt.Fprintln(w)
		if run.Summary != "" {
			fmt.Fprintf(w, "  %s\n", run.Summary)
		}
		t := run.Timings
		fmt.Fprintf(w, "  %d namespaces built in %s, services up in %s, probe %s, teardown %s\n\n",
			run.Namespaces, labSecs(t.BuildMS), labSecs(t.ServicesMS), labSecs(t.ProbeMS), labSecs(t.TeardownMS))
		if run.Probe != nil {
			if err := printProbe(w, run.Probe, o); err != nil {
				return err
			}
			fmt.Fprintln(w)
		} else if run.Verdict != nil {
			labWriteVerdict(w, run)
			fmt.Fprintln(w)
		}
		for _, c := range run.Checks {
			state := "ok"
			if !c.OK {
				state = "differs"
			}
			fmt.Fprintf(w, "check %s: %s (%s) %s\n", c.Name, state, labSecs(c.DurationMS), c.Detail)
		}
		if run.Error != "" {
			fmt.Fprintf(w, "error: %s\n", run.Error)
		}
		switch run.Result {
		case report.LabPass:
			fmt.Fprintf(w, "expect: %s, the verdict is the scenario's (%s)\n", labResultWord(o, run.Result), labExpectLine(run.Expect))
		case report.LabMismatch:
			fmt.Fprintf(w, "expect: %s, want %s\n", labResultWord(o, run.Result), labExpectLine(run.Expect))
			for _, m := range run.Mismatches {
				fmt.Fprintf(w, "  %s\n", m)
			}
		}
		if run.LogDir != "" {
			fmt.Fprintf(w, "service logs kept in %s\n", run.LogDir)
		}
	}
	return nil
}

func labExpectLine(e *report.LabExpect) string {
	if e == nil {
		return "nothing expected"
	}
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+" "+v)
		}
	}
	add("status", string(e.Status))
	add("condition", string(e.Condition))
	add("cause", string(e.Cause))
	add("stage", string(e.Stage))
	add("code", string(e.Code))
	add("role", string(e.Role))
	add("endpoint", e.Endpoint)
	if len(e.Warnings) > 0 {
		add("warnings", codeList(e.Warnings))
	}
	return strings.Join(parts, ", ")
}

func labWriteVerdict(w io.Writer, run *report.LabRun) {
	v := run.Verdict
	if v == nil {
		return
	}
	fmt.Fprintf(w, "verdict: %s\n", labVerdictLine(run))
	if v.Endpoint != "" {
		fmt.Fprintf(w, "  endpoint: %s (%s)\n", v.Endpoint, v.Role)
	}
	if v.Summary != "" {
		fmt.Fprintf(w, "  %s\n", v.Summary)
	}
	for _, a := range v.Advice {
		fmt.Fprintf(w, "  - %s\n", a)
	}
}

// writeDemo puts the demo's runs side by side.
func labWriteDemo(w io.Writer, r *report.LabReport, o Options) error {
	fmt.Fprintln(w, "pullpath lab demo: one registry, token service, blob host and DNS server on loopback;")
	fmt.Fprintln(w, "the same probe a node would run, over two paths.")
	fmt.Fprintln(w)
	if err := writeLabDemoTable(w, r, o); err != nil {
		return err
	}
	writeLabDemoFailures(w, r, o)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Next: `pullpath lab list` shows the real-network scenarios (root, network namespaces);")
	fmt.Fprintln(w, "`sudo pullpath lab run ecr-sg-drops-443` builds one and probes from its node.")
	return nil
}

// writeLabDemoTable is the two runs side by side, one row per fact.
func writeLabDemoTable(w io.Writer, r *report.LabReport, o Options) error {
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	row := func(label string, f func(*report.LabRun) string) {
		cells := []string{label}
		for _, run := range r.Runs {
			cells = append(cells, f(run))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	row("", func(run *report.LabRun) string { return run.Scenario })
	row("path", func(run *report.LabRun) string { return run.Summary })
	row("image", func(run *report.LabRun) string { return run.Image })
	vf := func(f func(*report.LabRun) string) func(*report.LabRun) string {
		return func(run *report.LabRun) string {
			if run.Verdict == nil {
				return "-"
			}
			if s := f(run); s != "" {
				return s
			}
			return "-"
		}
	}
	row("verdict", vf(func(run *report.LabRun) string {
		s := string(run.Verdict.Status)
		if run.Verdict.Status == "ok" {
			return labPaint(o, labGreen, s)
		}
		return labPaint(o, labRed, s)
	}))
	row("code", vf(func(run *report.LabRun) string { return string(run.Verdict.Code) }))
	row("condition", vf(func(run *report.LabRun) string { return string(run.Verdict.Condition) }))
	row("stage", vf(func(run *report.LabRun) string { return string(run.Verdict.Stage) }))
	row("cause", vf(func(run *report.LabRun) string { return string(run.Verdict.Cause) }))
	row("endpoint", vf(func(run *report.LabRun) string {
		if run.Verdict.Endpoint == "" {
			return ""
		}
		return fmt.Sprintf("%s (%s)", run.Verdict.Endpoint, run.Verdict.Role)
	}))
	row("downloaded", func(run *report.LabRun) string {
		if run.Probe == nil || run.Probe.Transfer == nil {
			return "-"
		}
		tr := run.Probe.Transfer
		if tr.Bytes == 0 {
			return "nothing"
		}
		s := fmt.Sprintf("%d blobs, %.1f KiB", tr.Blobs, float64(tr.Bytes)/1024)
		if tr.Verified {
			s += ", digests verified"
		}
		return s
	})
	row("exit code", func(run *report.LabRun) string { return fmt.Sprint(run.ExitCode) })
	row("time", func(run *report.LabRun) string { return labSecs(run.Timings.ProbeMS) })
	return tw.Flush()
}

// writeLabDemoFailures gives each failing run's summary and advice.
func writeLabDemoFailures(w io.Writer, r *report.LabReport, o Options) {
	for _, run := range r.Runs {
		if run.Error != "" {
			fmt.Fprintf(w, "\n%s: error: %s\n", run.Scenario, run.Error)
		}
		if run.Verdict == nil || run.Verdict.Status == "ok" {
			continue
		}
		fmt.Fprintf(w, "\n%s: %s\n", run.Scenario, run.Verdict.Summary)
		for i, a := range run.Verdict.Advice {
			if i == 2 && !o.Wide {
				break
			}
			fmt.Fprintf(w, "  - %s\n", a)
		}
	}
}

// codeList joins codes with commas.
func codeList(codes []verdict.Code) string {
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = string(c)
	}
	return strings.Join(s, ",")
}
