package lab_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/printers"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestDemo runs `lab demo` as a user would (no root, loopback only): the
// healthy path must pull, the blob-host-down path must fail on the blob host
// while the registry answered.
func TestDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	rep, err := lab.Demo(ctx, lab.DemoOptions{Self: os.Args[0], Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("Demo() = %v", err)
	}
	t.Logf("demo took %v", time.Since(start))
	if len(rep.Runs) != 2 {
		t.Fatalf("Demo() runs = %d, want 2", len(rep.Runs))
	}
	tests := []struct {
		run  *report.LabRun
		want verdict.Verdict
		exit int // the probe's verdict's alone, as the runner records it
	}{
		{rep.Runs[0], verdict.Verdict{Status: verdict.StatusOK, Code: verdict.OK}, 0},
		{rep.Runs[1], verdict.Verdict{Status: verdict.StatusFail, Condition: verdict.ConditionEndpointSet, Stage: verdict.StageBlob,
			Code: verdict.ConnectRefused, Role: verdict.RoleBlob}, 5},
	}
	for _, tt := range tests {
		r := tt.run
		if r.Verdict == nil {
			t.Errorf("demo %s: no verdict (%s)", r.Scenario, r.Error)
			continue
		}
		v := *r.Verdict
		if v.Status != tt.want.Status || v.Code != tt.want.Code || v.Condition != tt.want.Condition || v.Stage != tt.want.Stage || v.Role != tt.want.Role {
			t.Errorf("demo %s verdict = %s %s %s %s %s, want %s %s %s %s %s", r.Scenario,
				v.Status, v.Code, v.Condition, v.Stage, v.Role,
				tt.want.Status, tt.want.Code, tt.want.Condition, tt.want.Stage, tt.want.Role)
		}
		if r.ExitCode != tt.exit {
			t.Errorf("demo %s exit code = %d, want %d", r.Scenario, r.ExitCode, tt.exit)
		}
	}
	var buf bytes.Buffer
	if err := printers.Print(&buf, "text", rep, printers.Options{}); err != nil {
		t.Fatalf("Render(text) = %v", err)
	}
	for _, want := range []string{"healthy", "blob-host-down", "CONNECT_REFUSED", "endpoint-set", "blob.lab.test (blob)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("demo text lacks %q:\n%s", want, buf.String())
		}
	}
}
