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

// The renderers of the audit reports against golden files (go test
// ./internal/printers -update rewrites them):
//   - audit-s3-route: an AWSAuditReport, `pullpath aws audit --from
//     internal/audit/aws/testdata/fail-s3-route --image-size 1.2GiB
//     --pulls-per-day 400 -o json`;
//   - audit-azure-route: an AzureAuditReport focused by a probe report,
//     `pullpath azure audit --from
//     internal/audit/azure/testdata/invalid-route-disable-bgp --probe-report
//     probe.json -o json` (a CONNECT_TIMEOUT to the registry from node
//     aks-apps-12345678-vmss000002).
func TestAuditReportGolden(t *testing.T) {
	for _, tc := range []struct{ name, input string }{
		{"audit-s3-route", "valid-audit-s3-route.json"},
		{"audit-azure-route", "valid-audit-azure-route.json"},
	} {
		rep := loadAuditFile(t, tc.input)
		for _, format := range Formats {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				var out bytes.Buffer
				if err := Print(&out, format, rep, Options{}); err != nil {
					t.Fatalf("Print(%s): %v", format, err)
				}
				golden := filepath.Join("testdata", tc.name+"."+format+".golden")
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
}

func loadAudit(t *testing.T) *report.AuditReport {
	t.Helper()
	return loadAuditFile(t, "valid-audit-s3-route.json")
}

func loadAuditFile(t *testing.T, name string) *report.AuditReport {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
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

// A change names the objects it touches beside its resource: the dead
// target of the route it replaces.
func TestAuditTextNamesWhatAChangeTouches(t *testing.T) {
	rep := &report.AuditReport{Kind: report.AWSAuditKind, Changes: []report.Change{{Resource: "rtb-0c", Kind: "route-table", Touches: []string{"nat-0dead"},
		Action: "point 0.0.0.0/0 at an available NAT gateway in us-east-1c", Check: "route-internet", Subnets: []string{"subnet-0c"}}}}
	var out bytes.Buffer
	if err := Print(&out, "text", rep, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := "  1. rtb-0c (route-table): point 0.0.0.0/0 at an available NAT gateway in us-east-1c\n     touches nat-0dead\n"; !strings.Contains(out.String(), want) {
		t.Errorf("text = %q, want %q", out.String(), want)
	}
}
