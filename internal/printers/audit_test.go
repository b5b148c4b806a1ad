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
