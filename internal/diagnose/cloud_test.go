package diagnose

import (
	"strings"
	"testing"
	"time"

	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The audit diagnose runs is focused on what the walk found: the failing
// node's subnet comes first (placed by the node's providerID in the
// folder's instances) and the failing host's check explains the walk's
// code. With the failing node in a subnet that passes, that subnet still
// comes first and the audit says the fault lies outside the configuration.
func TestAuditFocusOrdersTheReport(t *testing.T) {
	fail := verdict.Verdict{Status: verdict.StatusFail, Code: verdict.ConnectTimeout, Condition: verdict.ConditionEndpointSet, Endpoint: s3Host + ":443", Role: verdict.RoleBlob}
	for _, tt := range []struct {
		name, node, providerID, subnet string
		prefix                         string
	}{
		{"the failing subnet", "node-c", "aws:///ap-northeast-2a/i-0c0e8cd69b234a89", "subnet-0c3a5b7d9e1f40003",
			"the probe's CONNECT_TIMEOUT on " + s3Host + " from ng-general: "},
		{"a subnet that passes", "node-b", "aws:///ap-northeast-2b/i-0c0e8bd69b2348d6", "subnet-0b2e4d6f8a0c30002",
			"the probed node's subnet "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &diagnosis{
				o: Options{Auditors: map[nodeplace.Cloud]Auditor{nodeplace.AWS: awsaudit.Provider.Folder("testdata/aws-scale-up-new-subnet")}},
				r: &report.DiagnoseReport{Sweep: &report.SweepReport{
					Nodes:   []report.SweepNode{{PlannedNode: report.PlannedNode{Name: tt.node}, Status: report.SweepFail, Verdict: fail}},
					Verdict: report.SweepVerdict{Status: verdict.StatusFail, Code: verdict.ConnectTimeout, Endpoint: s3Host + ":443", Role: verdict.RoleBlob},
				}},
				deadline: time.Now().Add(time.Minute),
				nodes:    map[string]NodeRef{tt.node: {Name: tt.node, ProviderID: tt.providerID}},
			}
			d.audit(t.Context())
			ar := d.r.Audit
			if ar == nil {
				t.Fatalf("no audit ran: steps %+v", d.r.Steps)
			}
			if ar.Subnets[0].ID != tt.subnet || ar.Target.FocusSubnet != tt.subnet || ar.Target.FocusHost != s3Host || ar.Target.ProbeVerdict != string(verdict.ConnectTimeout) {
				t.Errorf("first subnet %s, target %+v; want %s first and focused on %s", ar.Subnets[0].ID, ar.Target, tt.subnet, s3Host)
			}
			if !strings.HasPrefix(ar.Verdict.Summary, tt.prefix) {
				t.Errorf("verdict = %q, want it to start %q", ar.Verdict.Summary, tt.prefix)
			}
		})
	}
}
