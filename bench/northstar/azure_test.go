package northstar_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	azaudit "github.com/pullpath/pullpath/internal/audit/azure"
	"github.com/pullpath/pullpath/internal/audit/azure/armfake"
	"github.com/pullpath/pullpath/internal/diagnose"
	explaincluster "github.com/pullpath/pullpath/internal/explain/cluster"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
)

const (
	azureFolder = "../../internal/diagnose/testdata/azure-pool-private-zone-not-linked"
	zone        = "privatelink.azurecr.io" // the private DNS zone
	nodeVNet    = "vnet-lab"               // the VNet it must be linked to
)

// BenchmarkNorthStarAzure: the AKS private-zone scenario on real kubelets
// (the nodes of pool user ask a DNS server that does not see
// privatelink.azurecr.io), the account live from the ARM fake through the
// Azure SDK's own clients. The Azure SDK takes its ARM endpoint from
// options, not the environment, so the diagnosis runs in this process
// (diagnose.Run, what `pullpath diagnose` calls) rather than as a child
// pullpath as the AWS figure does; beside it, alternating who goes first,
// the same diagnosis from the account's saved folder (--from-azure), and
// once the collect (azure.Collect, what `pullpath azure collect` runs).
func BenchmarkNorthStarAzure(b *testing.B) {
	c := labtest.Require(b, "pool-private-zone-not-linked")
	ctx := b.Context()
	tar, _ := labtest.NodeImage(b)
	if err := c.ImportImage(ctx, tar); err != nil {
		b.Fatal(err)
	}
	if _, err := c.RunWorkload(ctx); err != nil {
		b.Fatalf("the scenario's story: %v", err)
	}
	labtest.WalkNamespace(b, c, sweepNS, secret)
	m, err := azaudit.Load(os.DirFS(azureFolder))
	if err != nil {
		b.Fatal(err)
	}
	srv := armfake.New(m)
	b.Cleanup(srv.Close)
	live := azaudit.LiveOptions{Credential: armfake.Credential{}, ClientOptions: srv.ClientOptions()}
	load, _ := os.ReadFile("/proc/loadavg")

	ns, name := c.WorkloadName()
	opts := func() diagnose.Options {
		o := diagnose.Options{Client: c.Client, Target: explaincluster.Target{Kind: "deployment", Name: name, Namespace: ns}, Budget: 2 * time.Minute}
		o.Sweep.ProbeImage, o.Sweep.Namespace, o.Sweep.DockerCerts = labtest.NodeImageRef, sweepNS, "/etc/containerd/docker-certs.d"
		o.Sweep.PullSecrets = []string{secret}
		return o
	}
	run := func(way string, o diagnose.Options) (time.Duration, map[string]float64, string) {
		start := time.Now()
		r, err := diagnose.Run(ctx, o)
		took := time.Since(start)
		if err != nil {
			b.Fatalf("%s: diagnose: %v", way, err)
		}
		return took, stepsOf(r), namesZoneLink(b, way, r)
	}
	var rows []row
	b.ResetTimer()
	for i := range *rounds {
		r := row{round: i + 1}
		liveRun := func() {
			o := opts()
			o.Live = &diagnose.Live{Options: map[nodeplace.Cloud]audit.Live{nodeplace.Azure: live}}
			var s map[string]float64
			r.live, s, r.named = run("live", o)
			r.read, r.identity, r.walk, r.audit, r.total = s["read"], s["identity"], s["walk"], s["audit"], s["total"]
		}
		byHand := func() {
			o := opts()
			o.Auditors = map[nodeplace.Cloud]diagnose.Auditor{nodeplace.Azure: azaudit.Provider.Folder(azureFolder)}
			var s map[string]float64
			r.folder, s, r.fnamed = run("--from-azure", o)
			r.fread, r.fidentity, r.fwalk, r.faudit, r.fto = s["read"], s["identity"], s["walk"], s["audit"], s["total"]
		}
		if i%2 == 0 {
			liveRun()
			byHand()
		} else {
			byHand()
			liveRun()
		}
		rows = append(rows, r)
	}
	b.StopTimer()
	start := time.Now()
	col := live
	col.Subscription, col.ResourceGroup, col.Cluster = "00000000-0000-0000-0000-000000000000", "lab", "lab"
	if _, err := azaudit.Collect(ctx, col); err != nil {
		b.Fatalf("azure collect: %v", err)
	}
	collect := time.Since(start)
	for i := range rows {
		rows[i].collect = collect
	}
	t := northStarTable(c, rows, strings.TrimSpace(string(load)))
	t = strings.Replace(t, "north star, AWS:", "north star, Azure (in process):", 1)
	t = strings.NewReplacer("names rtb + vpce", "names zone link", "aws collect", "azure collect", "--from-aws", "--from-azure").Replace(t)
	fmt.Print(t)
	reportMedians(b, rows)
}

// namesZoneLink says whether the answer's first change links the private
// zone to the node VNet ("yes"), or why not.
func namesZoneLink(b *testing.B, way string, r *report.DiagnoseReport) string {
	a := r.Answer
	if len(a.Changes) > 0 && strings.Contains(a.Changes[0].Resource, zone) && strings.Contains(a.Changes[0].Command, nodeVNet) {
		return "yes"
	}
	b.Logf("%s: the answer's changes %+v do not link %s to %s; steps %+v", way, a.Changes, zone, nodeVNet, r.Steps)
	return "no: " + auditReason(r)
}
