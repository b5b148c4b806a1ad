package printers

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
)

// The renderers of an AWSAuditReport (`pullpath aws audit --from
// internal/audit/aws/testdata/fail-s3-route --image-size 1.2GiB
// --pulls-per-day 400 -o json`), against golden files: go test
// ./internal/printers -update rewrites them.
func TestAuditReportGolden(t *testing.T) {
	rep := loadAudit(t)
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			var out bytes.Buffer
			if err := Print(&out, format, rep, Options{}); err != nil {
				t.Fatalf("Print(%s): %v", format, err)
			}
			golden := filepath.Join("testdata", "audit-s3-route."+format+".golden")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/printers -update)", err)
			}
			if out.String() != string(want) {
				t.Errorf("Print(%s) differs from %s (run go test ./internal/printers -update and review the diff):\n%s", format, golden, out.String())
			}
		})
	}
}

func loadAudit(t *testing.T) *report.AuditReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "valid-audit-s3-route.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.AuditReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("fixture does not parse as a report.AuditReport: %v", err)
	}
	return &rep
}

func TestAuditTextShowsFailingBesideHealthy(t *testing.T) {
	rep := loadAudit(t)
	var out bytes.Buffer
	if err := Print(&out, "text", rep, Options{}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"VERDICT FAIL (route, some-subnets)",
		"FAILING BESIDE HEALTHY: subnet-0c3c3c3c3c3c3c3c3 | subnet-0a1a1a1a1a1a1a1a1",
		"* s3-route                 fail     pass",
		"rtb-0a0a0a0a0a0a0a0a0 routes pl-63a5400a to the S3 gateway endpoint vpce-05335335335335335",
		"$ aws ec2 modify-vpc-endpoint --vpc-endpoint-id vpce-05335335335335335 --add-route-table-ids rtb-0c0c0c0c0c0c0c0c0",
		"nat-gateway", "s3-gateway-endpoint",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// Text hides the passing checks' lines outside the comparison; wide
	// shows every check with its evidence.
	var wide bytes.Buffer
	if err := Print(&wide, "wide", rep, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(wide.String(), "CHECKS") || !strings.Contains(wide.String(), "- pl-63a5400a -> vpce-05335335335335335") {
		t.Errorf("wide lacks every check's evidence:\n%s", wide.String())
	}
}
