package synth

import (
	"github.com/pullpath/pullpath/internal/audit"
	"os"
	"testing"

	azaudit "github.com/pullpath/pullpath/internal/audit/azure"
	"github.com/pullpath/pullpath/internal/report"
)

// The synthetic account reads back through the contract and fails one pool:
// the last, whose route table stops BGP propagation.
func TestAccount(t *testing.T) {
	m, err := Account(os.DirFS("../testdata/valid-healthy"), Size{Pools: 5, Routes: 30, Rules: 20, Records: 50})
	if err != nil {
		t.Fatal(err)
	}
	files, err := m.Files()
	if err != nil {
		t.Fatal(err)
	}
	lm, err := azaudit.Load(files.FS())
	if err != nil {
		t.Fatal(err)
	}
	if len(lm.Warnings) != 0 {
		t.Fatalf("warnings: %v", lm.Warnings)
	}
	r := azaudit.Audit(lm, "synth", audit.Focus{})
	if len(r.Subnets) != 5 || len(r.Verdict.Failing) != 1 || r.Subnets[0].Name != "snet-p04" || r.Verdict.Status != report.StepFail {
		t.Fatalf("subnets %d, failing %v, first %s, verdict %s", len(r.Subnets), r.Verdict.Failing, r.Subnets[0].Name, r.Verdict.Summary)
	}
}
