package sweeplab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/printers"
	"github.com/pullpath/pullpath/internal/probesummary"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/sweep"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestTraceSideBySide is sweep's trace comparison on real traces: the
// lab's vpn-no-route-back (the on-premises gateway has no route back to
// the nodes' subnet, and has one to the second node subnet) with a second
// node in that subnet. The probe runs with --trace on both nodes, as
// sweep's Pods do with --probe-arg=--trace; their termination messages go
// through sweep's parser and judge, which must name hop 2, the tunnel's
// far end, as the hop that answers the healthy node and not the failing
// one: its route back.
func TestTraceSideBySide(t *testing.T) {
	testenv.RequireNetns(t, "nft")
	s, err := scenario.LoadBuiltin("vpn-no-route-back")
	if err != nil {
		t.Fatal(err)
	}
	s.Hosts["node2"] = &scenario.Host{
		Interfaces: map[string]string{"nodes2": "10.20.2.15"},
		Routes:     []scenario.Route{{To: "10.20.0.0/16", Via: "10.20.2.1"}, {To: "172.16.0.0/12", Via: "10.20.2.1"}},
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := lab.Start(ctx, s, lab.StartOptions{Self: self})
	if l != nil {
		defer l.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	probe := func(host string) probesummary.Summary {
		t.Helper()
		empty := filepath.Join(l.Env.RunDir, "node", "empty.d")
		os.MkdirAll(empty, 0o755)
		argv := []string{self, "probe", l.Env.Image, "-o", "json", "--no-progress", "--node", host,
			"--nameserver", "10.20.0.2", "--hosts-file", "/dev/null",
			"--certs-dir", empty, "--docker-certs-dir", empty, "--docker-config", l.Env.DockerConfig,
			"--registry-ca", l.Env.CAFile, "--connect-timeout", "2s", "--mtu-budget", "0", "--trace", "--timeout", "60s"}
		cmd := l.Env.Command(ctx, l.Network.NS[host], argv...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		var rep report.ProbeReport
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("probe on %s: %v: %s", host, err, errb.String())
		}
		// what the Pod writes and sweep reads
		sum, err := probesummary.Parse(string(probesummary.Of(&rep).Marshal()))
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	fail, ok := probe("node"), probe("node2")
	if fail.Code != verdict.ConnectTimeout || ok.Status != verdict.StatusOK {
		t.Fatalf("node: %s, node2: %s; want CONNECT_TIMEOUT and a pull that works", fail.Code, ok.Status)
	}
	result := func(s probesummary.Summary) *report.SweepResult {
		st := report.SweepFail
		if s.Status == verdict.StatusOK {
			st = report.SweepOK
		}
		return &report.SweepResult{Status: st, Verdict: s.Verdict(), Traces: s.Traces}
	}
	r := &report.SweepReport{Nodes: []report.SweepNode{
		{PlannedNode: report.PlannedNode{Name: "node-a", Group: "ng/zone-1/nodes", Pool: "ng", Subnet: "nodes"}, Probe: result(fail)},
		{PlannedNode: report.PlannedNode{Name: "node-b", Group: "ng/zone-1/nodes2", Pool: "ng", Subnet: "nodes2"}, Probe: result(ok)},
	}}
	sweep.Judge(r)
	c := r.TraceCompare
	if c == nil {
		t.Fatalf("no trace comparison; traces failing %+v, healthy %+v", fail.Traces, ok.Traces)
	}
	b, _ := json.Marshal(c)
	if c.Destination != "172.16.5.10:443" || c.PartAt != 2 || c.Rows[1].Failing != "*" || c.Rows[1].Healthy != "10.255.0.2" || c.Rows[0].Failing != "10.20.1.1" || c.Rows[0].Healthy != "10.20.2.1" {
		t.Fatalf("comparison %s, want the paths parting at hop 2: silent for node-a, 10.255.0.2 (the tunnel's far end) for node-b", b)
	}
	if !strings.Contains(c.Finding, "10.255.0.2 answers the healthy node node-b there and stays silent for node-a") || !strings.Contains(c.Finding, "no route back to node-a's subnet") {
		t.Errorf("finding %q does not name the hop and its route back", c.Finding)
	}
	var text strings.Builder
	if err := printers.Print(&text, "text", r, printers.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "TRACE toward 172.16.5.10:443: node-a (failing) beside node-b (healthy)") || !strings.Contains(text.String(), "10.255.0.2   <- they part here") {
		t.Errorf("text output does not show the traces side by side:\n%s", text.String())
	}
	t.Logf("sweep text:\n%s", text.String())
	found := false
	for _, a := range r.Verdict.Advice {
		found = found || a == c.Finding
	}
	if !found {
		t.Errorf("the verdict's advice %q lacks the finding", r.Verdict.Advice)
	}
}
