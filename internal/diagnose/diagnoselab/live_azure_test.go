package diagnoselab_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	azaudit "github.com/pullpath/pullpath/internal/audit/azure"
	"github.com/pullpath/pullpath/internal/audit/azure/armfake"
	"github.com/pullpath/pullpath/internal/diagnose"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
)

// azureFolder is the lab AKS cluster's account (gen.py's lab_account): the
// subscription, node resource group and VMSS the lab nodes' providerIDs
// name, privatelink.azurecr.io linked to the hub only.
const azureFolder = "../testdata/azure-pool-private-zone-not-linked"

// The AKS private-zone scenario on real kubelets, with the Azure account
// live through the Azure SDK's own clients against the loopback ARM fake
// (no Azure emulator runs here): diagnose finds the cluster from the
// nodes' providerIDs alone, says who it read as, and its CHANGE is the
// folder's: link privatelink.azurecr.io to the node VNet. The pool whose
// nodes ask the custom DNS server is the one that fails.
func TestDiagnoseLiveAzureOnLab(t *testing.T) {
	t.Parallel()
	c := story(t, "pool-private-zone-not-linked", true)
	m, err := azaudit.Load(os.DirFS(azureFolder))
	if err != nil {
		t.Fatal(err)
	}
	srv := armfake.New(m)
	t.Cleanup(srv.Close)

	folderOpts := options(c, 2*time.Minute)
	folderOpts.Auditors = map[nodeplace.Cloud]diagnose.Auditor{nodeplace.Azure: azaudit.Provider.Folder(azureFolder)}
	_, folder := run(t, c, folderOpts)
	want := changeLines(folder)
	if len(want) == 0 || !strings.Contains(want[0], "privatelink.azurecr.io") || !strings.Contains(strings.Join(want, "\n"), "vnet-lab") {
		t.Fatalf("with the folder, CHANGE = %q: want the zone's link to vnet-lab", want)
	}

	liveOpts := options(c, 2*time.Minute)
	liveOpts.Live = &diagnose.Live{Options: map[nodeplace.Cloud]audit.Live{nodeplace.Azure: azaudit.LiveOptions{Credential: armfake.Credential{}, ClientOptions: srv.ClientOptions()}}}
	r, live := run(t, c, liveOpts)
	if got := changeLines(live); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("live CHANGE =\n%s\nwant the folder's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var audit *report.DiagnoseStep
	for i := range r.Steps {
		if r.Steps[i].Name == "audit" {
			audit = &r.Steps[i]
		}
	}
	if audit == nil || audit.Status != report.DiagnoseRan || !strings.Contains(audit.Summary, "live as application "+armfake.AppID) ||
		!strings.Contains(audit.Summary, "cluster lab in resource group lab") {
		t.Errorf("audit step = %+v, want it ran live as the fake's application on cluster lab", audit)
	}
	if n := srv.Calls()["GET managedClusters"]; n < 2 {
		t.Errorf("managedClusters calls = %d, want the subscription's list and the cluster's show", n)
	}
	var failing []string
	if r.Sweep != nil {
		for _, n := range r.Sweep.Nodes {
			if n.Status == report.SweepFail {
				failing = append(failing, n.Name)
			}
		}
	}
	if strings.Join(failing, ",") != "aks-user-12345678-vmss000002" {
		t.Errorf("failing nodes = %v, want aks-user-12345678-vmss000002 (node-c: pool user, the custom DNS server)", failing)
	}
}
