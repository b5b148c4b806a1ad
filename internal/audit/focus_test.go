package audit

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

func TestParseProbeReport(t *testing.T) {
	tests := []struct {
		name, doc string
		want      Focus
		err       string
	}{
		{"failing blob host", `{"kind":"ProbeReport","node":"ip-10-0-3-17.ec2.internal","transfer":{"bytes":734003200},
"verdict":{"status":"fail","code":"CONNECT_TIMEOUT","endpoint":"Prod-us-east-1-starport-layer-bucket.s3.us-east-1.amazonaws.com:443","role":"blob"}}`,
			Focus{Nodes: []Node{{Name: "ip-10-0-3-17.ec2.internal"}}, Host: "prod-us-east-1-starport-layer-bucket.s3.us-east-1.amazonaws.com", Role: verdict.RoleBlob,
				Code: verdict.ConnectTimeout, ImageBytes: 734003200, File: "probe.json"}, ""},
		{"a pull that worked names the registry", `{"kind":"ProbeReport","reference":{"host":"contosoacr.azurecr.io"},"verdict":{"status":"ok","code":"OK"}}`,
			Focus{Host: "contosoacr.azurecr.io", Code: verdict.OK, File: "probe.json"}, ""},
		{"another report", `{"kind":"AWSAuditReport"}`, Focus{}, `--probe-report probe.json: kind "AWSAuditReport", want ProbeReport`},
		{"not JSON", `{"kind":`, Focus{}, "--probe-report probe.json: not a probe report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProbeReport(strings.NewReader(tt.doc), "probe.json")
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("ParseProbeReport(%s) = %v, want one line starting %q", tt.name, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseProbeReport(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
	if _, err := ReadProbeReport(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("ReadProbeReport(missing) = %v, want the path error", err)
	}
	file := filepath.Join(t.TempDir(), "probe.json")
	if err := os.WriteFile(file, []byte(`{"kind":"ProbeReport","node":"n1","verdict":{"status":"fail","code":"OK"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := ReadProbeReport(file); err != nil || f.File != file || f.NodeNames()[0] != "n1" {
		t.Errorf("ReadProbeReport = %+v, %v; want node n1 from %s", f, err, file)
	}
}

func TestHostOf(t *testing.T) {
	for in, want := range map[string]string{
		"ACR.azurecr.io:443": "acr.azurecr.io", "acr.azurecr.io.": "acr.azurecr.io", "[fd00::1]:5000": "fd00::1", "fd00::1": "fd00::1", "": "",
	} {
		if got := HostOf(in); got != want {
			t.Errorf("HostOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// focusReport is three subnets: a fails its route, b and c pass; c holds
// the probed node.
func focusReport() *report.AuditReport {
	r := &report.AuditReport{}
	for _, s := range []struct {
		id, cidr, pool string
		route          report.StepStatus
	}{{"a", "10.0.1.0/24", "web", report.StepFail}, {"b", "10.0.2.0/24", "api", report.StepPass}, {"c", "10.0.3.0/24, 10.9.3.0/24", "jobs", report.StepPass}} {
		route := Pass("route ok")
		if s.route == report.StepFail {
			route = Fail(verdict.ConditionRoute, "rtb-"+s.id+" has no route")
		}
		route.ID = "route"
		dns := Pass("dns ok")
		dns.ID = "dns"
		r.Subnets = append(r.Subnets, &report.AuditSubnet{ID: s.id, CIDR: s.cidr, Pools: []string{s.pool}, Checks: []report.CheckResult{route, dns}})
	}
	return r
}

func TestFinishPutsTheFocusFirst(t *testing.T) {
	for _, tt := range []struct {
		name string
		node Node
	}{
		{"by subnet id", Node{Name: "n", Subnet: "C"}},
		{"by address", Node{Name: "n", Addresses: []netip.Addr{netip.MustParseAddr("10.9.3.7")}}},
		{"by pool", Node{Name: "n", Pool: "jobs"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := focusReport()
			Finish(r, Focus{Nodes: []Node{tt.node}, Host: "registry.example", Code: verdict.DNSNXDomain})
			var order []string
			for _, s := range r.Subnets {
				order = append(order, s.ID)
			}
			if diff := cmp.Diff([]string{"c", "a", "b"}, order); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			if r.Target.FocusSubnet != "c" || r.Target.FocusHost != "registry.example" || r.Target.ProbeVerdict != string(verdict.DNSNXDomain) {
				t.Errorf("target = %+v, want focus on c, the host and the code", r.Target)
			}
			// c passes: the probe's fault is outside the configuration.
			if !strings.HasPrefix(r.Verdict.Summary, "the probed node's subnet c passes every check; the probe's DNS_NXDOMAIN on registry.example is outside") {
				t.Errorf("summary = %q", r.Verdict.Summary)
			}
			if len(r.Warnings) != 0 {
				t.Errorf("warnings = %v, want none", r.Warnings)
			}
		})
	}
}

func TestFinishExplainsTheProbeOnTheFocusedSubnet(t *testing.T) {
	r := focusReport()
	r.Subnets[0].Checks[1] = Fail(verdict.ConditionDNS, "no A record for registry.example")
	r.Subnets[0].Checks[1].ID, r.Subnets[0].Checks[1].Host = "dns", "registry.example"
	Finish(r, Focus{Nodes: []Node{{Name: "n", Pool: "web"}}, Host: "registry.example", Code: verdict.DNSNXDomain})
	// The route fails first, but the probe saw a DNS answer: the DNS check explains it.
	if !strings.HasPrefix(r.Verdict.Summary, "the probe's DNS_NXDOMAIN on registry.example from web: no A record for registry.example (dns); only 1 subnet of 3 fails (a)") {
		t.Errorf("summary = %q", r.Verdict.Summary)
	}
	if r.Verdict.Condition != verdict.ConditionDNS {
		t.Errorf("condition = %q, want dns (the check that explains the probe)", r.Verdict.Condition)
	}
	if r.Comparison == nil || r.Comparison.Failing != "a" {
		t.Errorf("comparison = %+v, want the focused failing subnet a", r.Comparison)
	}
}

func TestFinishWarnsOfANodeInNoSubnet(t *testing.T) {
	r := focusReport()
	Finish(r, Focus{Nodes: []Node{{Name: "ghost"}, {Name: "n", Pool: "api"}}, File: "probe.json"})
	want := []report.AuditWarning{{File: "probe.json", Message: "node ghost is in none of the audited node subnets (no instance, pool or subnet range of the cluster holds it)"}}
	if diff := cmp.Diff(want, r.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if r.Subnets[0].ID != "b" || r.Target.FocusSubnet != "b" {
		t.Errorf("first = %s, focus %q; want b, the placed node's", r.Subnets[0].ID, r.Target.FocusSubnet)
	}
	if strings.HasPrefix(r.Verdict.Summary, "the probe") {
		t.Errorf("summary = %q, want no probe sentence without a code", r.Verdict.Summary)
	}
}

func TestKeep(t *testing.T) {
	ids := []string{"subnet-a", "subnet-b", "subnet-c"}
	id := func(s string) string { return s }
	keep, ws := Keep(Focus{Subnets: []string{"subnet-c", "subnet-x", "SUBNET-A"}}, ids, id, "prod")
	if diff := cmp.Diff([]string{"subnet-a", "subnet-c"}, keep); diff != "" {
		t.Errorf("Keep (-want +got):\n%s", diff)
	}
	want := []report.AuditWarning{{Message: "--subnet subnet-x is not a node subnet of cluster prod (no node pool or node in it)"}}
	if diff := cmp.Diff(want, ws); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if keep, ws := Keep(Focus{}, ids, id, "prod"); len(keep) != 3 || ws != nil {
		t.Errorf("Keep(no --subnet) = %v, %v; want every subnet, no warning", keep, ws)
	}
}

func TestBuilders(t *testing.T) {
	c := WithChange(WithResources(Fail(verdict.ConditionRoute, "rtb-1 sends 0.0.0.0/0 to nat-dead, which is gone", "ev"), "rtb-1", "", "rtb-1"),
		report.Change{Resource: "rtb-1", Touches: []string{"nat-dead"}, Action: "replace the route"})
	want := report.CheckResult{Status: report.StepFail, Condition: verdict.ConditionRoute, Summary: "rtb-1 sends 0.0.0.0/0 to nat-dead, which is gone", Evidence: []string{"ev"},
		Resources: []string{"rtb-1", "nat-dead"}, Changes: []report.Change{{Resource: "rtb-1", Touches: []string{"nat-dead"}, Action: "replace the route"}}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("builders (-want +got):\n%s", diff)
	}
	if s := Skip("moot"); s.Status != report.StepSkip || Pass("ok").Status != report.StepPass || Warn("", "?").Status != report.StepWarn {
		t.Errorf("Skip/Pass/Warn statuses wrong: %+v", s)
	}
}
