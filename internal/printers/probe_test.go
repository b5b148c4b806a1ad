package printers

import (
	"bytes"
	"encoding/json"
	"flag"
	"github.com/pullpath/pullpath/internal/report"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// The renderers of a ProbeReport recorded from the lab (ecr-blob-host-dropped),
// against golden files: go test ./internal/report -update rewrites them.
func TestProbeReportGolden(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "valid-probe-blob-dropped.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.ProbeReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("fixture does not parse as a report.ProbeReport: %v", err)
	}
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			var out bytes.Buffer
			if err := Print(&out, format, &rep, Options{}); err != nil {
				t.Fatalf("Print(%s): %v", format, err)
			}
			golden := filepath.Join("testdata", "probe-blob-dropped."+format+".golden")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/report -update)", err)
			}
			if out.String() != string(want) {
				t.Errorf("Print(%s) differs from %s (run go test ./internal/report -update and review the diff):\n%s", format, golden, out.String())
			}
		})
	}
}

func TestProbeTextNamesTheVerdict(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join("testdata", "valid-probe-blob-dropped.json"))
	var rep report.ProbeReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Print(&out, "text", &rep, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"VERDICT  FAIL  CONNECT_TIMEOUT", "condition endpoint-set", "WHERE TO LOOK", "prefix-list", "skip layer"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text rendering lacks %q:\n%s", want, out.String())
		}
	}
	if err := Print(&out, "xml", &rep, Options{}); err == nil || !strings.Contains(err.Error(), "text, wide, json, yaml") {
		t.Errorf("Print(xml) error = %v, want one listing the formats", err)
	}
}
