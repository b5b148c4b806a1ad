// Package printers renders pullpath's reports (internal/report) for people
// and scripts: text and wide for a person, json and yaml for scripts. Engines
// fill reports and never import this package; only internal/cli chooses a
// format (go-containerregistry's split: pkg/v1 types, printed in cmd/crane).
package printers

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/report"
)

// Formats are the values -o accepts.
var Formats = []string{"text", "wide", "json", "yaml"}

// Options tune the text renderings.
type Options struct {
	Wide  bool // every address, every exchange
	Color bool // the writer is a terminal
}

// CheckFormat validates an -o value with a one-line error that lists the
// allowed values.
func CheckFormat(format string) error {
	for _, f := range Formats {
		if f == format {
			return nil
		}
	}
	return fmt.Errorf("unknown output format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// Print writes v in format. json and yaml are the report itself; text and
// wide are the report's rendering for a person.
func Print(w io.Writer, format string, v any, o Options) error {
	if err := CheckFormat(format); err != nil {
		return err
	}
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	o.Wide = o.Wide || format == "wide"
	switch r := v.(type) {
	case *report.ProbeReport:
		return printProbe(w, r, o)
	case *report.ExplainReport:
		return printExplain(w, r, o)
	case *report.DiagnoseReport:
		return printDiagnose(w, r, o)
	case *report.LabReport:
		return printLab(w, r, o)
	case *report.MonitorFleetReport:
		return printMonitorFleet(w, r, o)
	case *report.SweepReport:
		return printSweep(w, r, o)
	case *report.AuditReport:
		return printAudit(w, r, o)
	}
	return fmt.Errorf("report %T has no text rendering", v)
}
