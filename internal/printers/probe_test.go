package printers

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// goldens are reports recorded from real runs (testdata/valid-*.json) and
// the name of their golden files (testdata/NAME.FORMAT.golden).
var goldens = []struct {
	name, fixture string
	newReport     func() any
}{
	// probe from the lab's ecr-blob-host-dropped node
	{"probe-blob-dropped", "valid-probe-blob-dropped.json", func() any { return &report.ProbeReport{} }},
	// probe of a hosts.toml chain: a refused mirror, a HEAD-404 cache, the registry (internal/pull TestChainReportRows, PULLPATH_CHAIN_RECORD)
	{"probe-mirror-chain", "valid-probe-mirror-chain.json", func() any { return &report.ProbeReport{} }},
	{"probe-runtime-k3s", "valid-probe-runtime-k3s.json", func() any { return &report.ProbeReport{} }},
	// probe of the loopback stack with an AAAA beside the registry's A (TestProbeIPv6PathBroken, PULLPATH_PROBE_RECORD)
	{"probe-ipv6-broken", "valid-probe-ipv6-broken.json", func() any { return &report.ProbeReport{} }},
	// explain --from ../explain/testdata/valid-events.json
	{"explain-events", "valid-explain-events.json", func() any { return &report.ExplainReport{} }},
	// explain -n shop against a real apiserver (TestExplainNamespace's cluster)
	{"explain-cluster", "valid-explain-cluster.json", func() any { return &report.ExplainReport{} }},
	// lab run ecr-blob-host-dropped
	{"lab-run", "valid-lab-run.json", func() any { return &report.LabReport{} }},
	// lab test acr-healthy tls-unknown-ca ecr-sg-drops-443
	{"lab-test", "valid-lab-test.json", func() any { return &report.LabReport{} }},
	// lab demo
	{"lab-demo", "valid-lab-demo.json", func() any { return &report.LabReport{} }},
	// sweep --canary on the lab cluster's scale-up-new-subnet (TestLabScaleUpNewSubnet, PULLPATH_SWEEP_RECORD)
	{"sweep-scale-up", "valid-sweep-scale-up.json", func() any { return &report.SweepReport{} }},
	// diagnose -n shop against a real apiserver without Pod rights, with the
	// saved AWS folder (TestDiagnoseNamesTheAWSObject, PULLPATH_DIAGNOSE_RECORD=DIR)
	{"diagnose-read-audit", "valid-diagnose-read-audit.json", func() any { return &report.DiagnoseReport{} }},
	// monitor status against a real apiserver: two failing agents and one
	// restored (TestAgentWithRealAPIServer, PULLPATH_MONITOR_RECORD=FILE)
	{"monitor-status", "valid-monitor-status.json", func() any { return &report.MonitorFleetReport{} }},
	// aws audit --from ../audit/aws/testdata/fail-s3-route --image-size 1.2GiB --pulls-per-day 400
	{"audit-s3-route", "valid-audit-s3-route.json", func() any { return &report.AuditReport{} }},
	// azure audit --from ../audit/azure/testdata/invalid-route-disable-bgp --probe-report probe.json
	// (a CONNECT_TIMEOUT to the registry from node aks-apps-12345678-vmss000002)
	{"audit-azure-route", "valid-audit-azure-route.json", func() any { return &report.AuditReport{} }},
	// gcp audit us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2 --from ../audit/gcp/testdata/invalid-pga-off
	// (Private Google Access off on nodes-b beside a healthy nodes-a)
	{"audit-gcp-pga", "valid-audit-gcp-pga.json", func() any { return &report.AuditReport{} }},
}

// TestGolden renders each recorded report in every format against its
// golden files: go test ./internal/printers -update rewrites them.
func TestGolden(t *testing.T) {
	for _, g := range goldens {
		b, err := os.ReadFile(filepath.Join("testdata", g.fixture))
		if err != nil {
			t.Fatal(err)
		}
		rep := g.newReport()
		if err := json.Unmarshal(b, rep); err != nil {
			t.Fatalf("%s does not parse as a %T: %v", g.fixture, rep, err)
		}
		for _, format := range Formats {
			t.Run(g.name+"/"+format, func(t *testing.T) {
				var out bytes.Buffer
				if err := Print(&out, format, rep, Options{}); err != nil {
					t.Fatalf("Print(%s): %v", format, err)
				}
				golden := filepath.Join("testdata", g.name+"."+format+".golden")
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
