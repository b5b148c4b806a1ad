package diagnose

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

const ecrImage = "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/shop/web:1.0"
const s3Host = "prod-ap-northeast-2-starport-layer-bucket.s3.ap-northeast-2.amazonaws.com"

func explainScaleUp() *report.ExplainReport {
	return &report.ExplainReport{Scope: "deployment shop/web", Groups: []report.ExplainGroup{{
		Image: ecrImage, Code: verdict.ConnectTimeout, Condition: verdict.ConditionEndpointSet, Cause: verdict.CauseTimeout,
		Endpoint: s3Host, Findings: 3, FailingPods: []string{"shop/web-c"}, HealthyPods: []string{"shop/web-a", "shop/web-b"},
		Pattern: "subnet", Verdict: "only nodes of subnet 10.0.30.0/24 fail",
		Nodes: []report.ExplainNode{
			{Name: "node-c", Status: report.NodeStatusFailed, Subnet: "10.0.30.0/24"},
			{Name: "node-a", Status: report.NodeStatusOK, Subnet: "10.0.10.0/24"},
		},
		Advice: []string{"ECR layers come from S3"},
	}}}
}

func sweepScaleUp() *report.SweepReport {
	fail := verdict.Verdict{Status: verdict.StatusFail, Code: verdict.ConnectTimeout, Condition: verdict.ConditionEndpointSet, Cause: verdict.CauseTimeout,
		Endpoint: s3Host, Role: verdict.RoleBlob, Summary: s3Host + " (blob) does not answer: TCP connect to 10.0.20.10:443 timed out"}
	ok := verdict.Verdict{Status: verdict.StatusOK, Code: verdict.OK}
	return &report.SweepReport{
		Nodes: []report.SweepNode{
			{PlannedNode: report.PlannedNode{Name: "node-c", InternalIP: "10.0.30.7"}, Status: report.SweepFail, Verdict: fail,
				Probe: &report.SweepResult{Status: report.SweepFail, Verdict: fail, Hops: []report.SweepHop{{Host: s3Host, Role: verdict.RoleBlob, Address: "10.0.20.10", Status: report.StepFail, Step: "connect", Code: verdict.ConnectTimeout}}}},
			{PlannedNode: report.PlannedNode{Name: "node-a"}, Status: report.SweepOK, Verdict: ok},
		},
		Groups:  []report.SweepGroup{{Key: "a"}, {Key: "c"}},
		Verdict: report.SweepVerdict{Status: verdict.StatusFail, Pattern: "subnet", Condition: verdict.ConditionEndpointSet, Code: verdict.ConnectTimeout, Endpoint: s3Host, Role: verdict.RoleBlob, Summary: "every node of subnet 10.0.30.0/24 fails CONNECT_TIMEOUT to the blob host", OK: 1, Failed: 1},
	}
}

func TestAnswerFromTheWalk(t *testing.T) {
	r := &report.DiagnoseReport{Scope: "deployment shop/web", Image: ecrImage, Explain: explainScaleUp(), Sweep: sweepScaleUp()}
	a := Answer(r, []cloudNeed{{Cloud: nodeplace.AWS, Nodes: 1, Next: byHand(nodeplace.AWS)}})
	if a.Status != report.AnswerBroken || a.Source != "walk" || a.Condition != verdict.ConditionEndpointSet {
		t.Fatalf("Answer = status %s source %s condition %s, want broken walk endpoint-set", a.Status, a.Source, a.Condition)
	}
	l := a.Link
	if l == nil || l.Host != s3Host || l.Role != verdict.RoleBlob || l.Step != "connect" || l.Address != "10.0.20.10" || l.Code != verdict.ConnectTimeout {
		t.Errorf("Link = %+v, want %s blob connect 10.0.20.10 CONNECT_TIMEOUT", l, s3Host)
	}
	if len(l.Nodes) != 1 || l.Nodes[0] != "node-c" {
		t.Errorf("Link.Nodes = %v, want [node-c]", l.Nodes)
	}
	if !strings.Contains(a.Where, "subnet 10.0.30.0/24") {
		t.Errorf("Where = %q, want the subnet the walk separated", a.Where)
	}
	if !strings.Contains(strings.Join(a.Look, "\n"), "pullpath aws collect") {
		t.Errorf("Look = %q, want the AWS audit named for the unaudited cloud", a.Look)
	}
	if len(a.Prove) != 2 || a.Prove[0] != "pullpath sweep "+ecrImage+" --canary --per pool" || !strings.Contains(a.Prove[1], "created after the fix") {
		t.Errorf("Prove = %q, want the canary sweep per pool and the new-node hint", a.Prove)
	}
	if a.Exit != 5 {
		t.Errorf("Exit = %d, want 5 (endpoint-set)", a.Exit)
	}
}

func TestAnswerChangesFromTheAudit(t *testing.T) {
	r := &report.DiagnoseReport{Image: ecrImage, Explain: explainScaleUp(), Sweep: sweepScaleUp(), Audit: &report.AuditReport{
		Target: report.AuditTarget{Cloud: "aws"},
		Subnets: []*report.AuditSubnet{
			{ID: "subnet-0c", CIDR: "10.0.30.0/24", Verdict: report.StepFail, Checks: []report.CheckResult{{ID: "s3-route", Status: report.StepFail, Condition: verdict.ConditionEndpointSet}, {ID: "nacl", Status: report.StepWarn, Condition: verdict.ConditionRoute}}},
			{ID: "subnet-0a", CIDR: "10.0.10.0/24", Verdict: report.StepFail},
		},
		// The audit finds both subnets failing; the walk failed only on
		// node-c (10.0.30.7), so only subnet-0c's changes are the answer's.
		Verdict: report.AuditVerdict{Status: report.StepFail, Condition: verdict.ConditionEndpointSet, Failing: []string{"subnet-0a", "subnet-0c"}},
		Changes: []report.Change{
			{Resource: "subnet-0a-only", Action: "unrelated", Check: "nacl", Subnets: []string{"subnet-0a"}},
			{Resource: "acl-0c", Action: "allow ephemeral", Check: "nacl", Subnets: []string{"subnet-0c"}},
			{Resource: "rtb-0c", Action: "add the S3 gateway endpoint vpce-0s3 to rtb-0c", Check: "s3-route", Subnets: []string{"subnet-0c"}},
		},
	}}
	a := Answer(r, []cloudNeed{{Cloud: "aws", Audited: true}})
	if len(a.Changes) != 2 || a.Changes[0].Resource != "rtb-0c" || a.Changes[1].Resource != "acl-0c" {
		t.Fatalf("Changes = %+v, want rtb-0c (the answer's direction) then acl-0c, nothing for a subnet no failing node is in", a.Changes)
	}
	if strings.Contains(strings.Join(a.Look, "\n"), "collect") {
		t.Errorf("Look = %q: an audited cloud must not be named as still to audit", a.Look)
	}
}

func TestAnswerFromTheEventsWhenTheWalkPulls(t *testing.T) {
	sw := &report.SweepReport{Nodes: []report.SweepNode{{PlannedNode: report.PlannedNode{Name: "node-c"}, Status: report.SweepOK}},
		Verdict: report.SweepVerdict{Status: verdict.StatusOK, OK: 1}}
	r := &report.DiagnoseReport{Image: ecrImage, Explain: explainScaleUp(), Sweep: sw}
	a := Answer(r, nil)
	if a.Status != report.AnswerBroken || a.Source != "read" || a.Code != verdict.ConnectTimeout {
		t.Fatalf("Answer = %s from %s code %s, want broken from read CONNECT_TIMEOUT", a.Status, a.Source, a.Code)
	}
	if !strings.Contains(strings.Join(a.Look, "\n"), "--canary") {
		t.Errorf("Look = %q, want the hint that the kubelet's own pull may differ", a.Look)
	}
}

func TestAnswerNothingFailing(t *testing.T) {
	r := &report.DiagnoseReport{Scope: "namespace shop", Explain: &report.ExplainReport{Scope: "namespace shop"}}
	a := Answer(r, nil)
	if a.Status != report.AnswerNothing || a.Link != nil || !strings.Contains(a.Summary, "--image") || a.Exit != 0 {
		t.Errorf("Answer = %+v, want nothing-failing with the --image hint, exit 0", a)
	}
	sw := &report.SweepReport{Groups: []report.SweepGroup{{Key: "a"}, {Key: "b"}}, Verdict: report.SweepVerdict{Status: verdict.StatusOK, OK: 2}}
	r = &report.DiagnoseReport{Scope: "namespace shop", Image: ecrImage, Explain: &report.ExplainReport{}, Sweep: sw}
	if a := Answer(r, nil); a.Status != report.AnswerOK || !strings.Contains(a.Summary, "2 nodes") {
		t.Errorf("Answer with a green walk = %+v, want ok naming the 2 nodes walked", a)
	}
}

func TestCloudOf(t *testing.T) {
	for in, want := range map[string]nodeplace.Cloud{
		"aws:///ap-northeast-2a/i-0abc": nodeplace.AWS,
		"azure:///subscriptions/s/resourceGroups/mc/providers/Microsoft.Compute/virtualMachineScaleSets/aks-apps/virtualMachines/0": nodeplace.Azure,
		"gce://p/z/n":                           nodeplace.GCP,
		"kind://docker/kind/kind-control-plane": "",
		"":                                      "",
	} {
		if got := nodeplace.CloudOf(in); got != want {
			t.Errorf("CloudOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// The broken link's address is the failing hop's, as the probe recorded
// it: IPv6 as well as IPv4, and none for a failure before any connect.
func TestAnswerAddressFromTheHop(t *testing.T) {
	tests := []struct {
		name    string
		cause   verdict.Cause
		hopAddr string
		want    string
	}{
		{"IPv6 connect timeout", verdict.CauseTimeout, "fd00:20::10", "fd00:20::10"},
		{"TLS", verdict.CauseTLS, "10.0.20.10", "10.0.20.10"},
		{"DNS has none of its own", verdict.CauseDNS, "", ""},
		{"a summary's address is not read", verdict.CauseRefused, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sw := sweepScaleUp()
			n := &sw.Nodes[0]
			n.Verdict.Cause = tt.cause
			n.Verdict.Summary = s3Host + " (blob) refuses connections on 10.9.9.9:443"
			n.Probe.Hops[0].Address = tt.hopAddr
			r := &report.DiagnoseReport{Image: ecrImage, Explain: explainScaleUp(), Sweep: sw}
			if a := Answer(r, nil); a.Link == nil || a.Link.Address != tt.want {
				t.Errorf("Link = %+v, want address %q", a.Link, tt.want)
			}
		})
	}
}

// Probe Pods stuck on their own image prove nothing about the target's
// path: the events decide, and the answer says how to ship the probe.
func TestAnswerProbeImageUnpullable(t *testing.T) {
	stuck := verdict.Verdict{Status: verdict.StatusFail, Code: verdict.DNSNXDomain, Condition: verdict.ConditionDNS, Endpoint: "ghcr.io"}
	sw := &report.SweepReport{ProbeImage: "ghcr.io/pullpath/pullpath:1.0", Nodes: []report.SweepNode{
		{PlannedNode: report.PlannedNode{Name: "node-c"}, Status: report.SweepFail, Verdict: stuck,
			Probe: &report.SweepResult{Source: report.SourceProbeEvents, Status: report.SweepFail, Verdict: stuck}},
	}, Verdict: report.SweepVerdict{Status: verdict.StatusFail, Code: verdict.DNSNXDomain, Condition: verdict.ConditionDNS, Failed: 1}}
	r := &report.DiagnoseReport{Image: ecrImage, Explain: explainScaleUp(), Sweep: sw}
	a := Answer(r, nil)
	if a.Source != "read" || a.Code != verdict.ConnectTimeout || a.Link == nil || a.Link.Host != s3Host {
		t.Errorf("Answer = %s %s %+v, want the events' CONNECT_TIMEOUT to %s", a.Source, a.Code, a.Link, s3Host)
	}
	if !strings.Contains(strings.Join(a.Look, "\n"), "--image-for-probe") {
		t.Errorf("Look = %q, want how to ship the probe's image", a.Look)
	}
	r = &report.DiagnoseReport{Image: ecrImage, Explain: &report.ExplainReport{}, Sweep: sw}
	if a := Answer(r, nil); a.Status != report.AnswerUnknown {
		t.Errorf("nothing read and the probe stuck: Answer = %s, want unknown", a.Status)
	}
}

// TestAnswerNamesThePath: the answer from a walk over a VPN names what the
// probes learned past the node: the path MTU, the rate of a pull the runtime
// will abort, and the hop where a failing node's trace parts from a healthy
// one's (sweep --trace).
func TestAnswerNamesThePath(t *testing.T) {
	const reg = "harbor.corp.example"
	finding := "--trace toward 172.16.5.10:443: the paths part at hop 2. 10.255.0.2 answers the healthy node node-b there and stays silent for node-a"
	for _, tc := range []struct {
		code    verdict.Code
		role    verdict.Role
		summary string
		want    string
		exit    int
	}{
		{verdict.PathMTUBlackHole, verdict.RoleRegistry, "TCP to 172.16.5.10:443 (harbor.corp.example, registry) connects but the TLS handshake stalls: the server's answer never arrives. On new connections with the MSS clamped, 1360 completed and 1361 stalled: the path MTU toward 172.16.5.10 is 1400 bytes",
			"the path MTU toward 172.16.5.10 is 1400 bytes", 3},
		{verdict.PullProgressTimeout, verdict.RoleBlob, "no blob received a byte for 1m12s while downloading from harbor.corp.example (harbor.corp.example 0.02 MB/s): containerd 1.7.3 aborts a pull after 1m without progress (image_pull_progress_timeout), so the runtime aborts this pull, though every byte arrived in the end here",
			"harbor.corp.example 0.02 MB/s", 3},
	} {
		v := verdict.Verdict{Status: verdict.StatusFail, Code: tc.code, Condition: verdict.ConditionRoute, Cause: verdict.CauseTimeout, Endpoint: reg, Role: tc.role, Summary: tc.summary}
		ok := verdict.Verdict{Status: verdict.StatusOK, Code: verdict.OK}
		sw := &report.SweepReport{
			Nodes: []report.SweepNode{
				{PlannedNode: report.PlannedNode{Name: "node-a"}, Status: report.SweepFail, Verdict: v, Probe: &report.SweepResult{Status: report.SweepFail, Verdict: v}},
				{PlannedNode: report.PlannedNode{Name: "node-b"}, Status: report.SweepOK, Verdict: ok},
			},
			Verdict: report.SweepVerdict{Status: verdict.StatusFail, Pattern: "subnet", Condition: verdict.ConditionRoute, Code: tc.code, Endpoint: reg, Role: tc.role,
				Summary: "every node of subnet nodes fails " + string(tc.code), Advice: []string{finding}, OK: 1, Failed: 1},
			TraceCompare: &report.SweepTraceCompare{Destination: "172.16.5.10:443", Failing: "node-a", Healthy: "node-b", PartAt: 2, Finding: finding},
		}
		a := Answer(&report.DiagnoseReport{Image: reg + "/platform/api:3.2.0", Sweep: sw}, nil)
		if a.Code != tc.code || !strings.Contains(a.Summary, tc.want) {
			t.Errorf("%s: Answer = %s %q, want %q named", tc.code, a.Code, a.Summary, tc.want)
		}
		if !strings.Contains(strings.Join(a.Look, "\n"), "the paths part at hop 2") {
			t.Errorf("%s: Look = %q, want the hop where the traces part", tc.code, a.Look)
		}
		if a.Exit != tc.exit {
			t.Errorf("%s: Exit = %d, want %d (route)", tc.code, a.Exit, tc.exit)
		}
	}
}
