package diagnose

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/pullpath/pullpath/internal/audit"
	azaudit "github.com/pullpath/pullpath/internal/audit/azure"
	"github.com/pullpath/pullpath/internal/audit/azure/armfake"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

const azureFixture = "../audit/azure/testdata/invalid-route-disable-bgp"

// refusedCredential is a credential Entra ID refuses, in the words
// azidentity's chain gives when nothing in it has a token.
type refusedCredential struct{}

func (refusedCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{}, errors.New("DefaultAzureCredential: failed to acquire a token.\nAttempted credentials:\n\tEnvironmentCredential: missing environment variable AZURE_TENANT_ID")
}

// Live Azure from diagnose, through the Azure SDK's own clients against
// the loopback ARM fake serving the fixture's account: the cluster is
// found from the nodes' providerID (the subscription and the node
// resource group, then the subscription's AKS clusters), the audit step
// says who it read as, and the answer's audit is the folder's; a refused
// credential is a skipped step naming the collect command; a refused list
// names the permission and who lacks it.
func TestDiagnoseLiveAzure(t *testing.T) {
	m, err := azaudit.Load(os.DirFS(azureFixture))
	if err != nil {
		t.Fatal(err)
	}
	sub := strings.Split(strings.Trim(*m.Cluster.ID, "/"), "/")[1]
	nodeRG := *m.Cluster.Properties.NodeResourceGroup
	node := NodeRef{Name: "aks-apps-12345678-vmss000000",
		ProviderID: "azure:///subscriptions/" + sub + "/resourceGroups/" + nodeRG + "/providers/Microsoft.Compute/virtualMachineScaleSets/aks-apps-12345678-vmss/virtualMachines/0"}
	fail := verdict.Verdict{Status: verdict.StatusFail, Code: verdict.ConnectTimeout, Condition: verdict.ConditionRoute, Endpoint: "contosoacr.azurecr.io:443", Role: verdict.RoleRegistry}
	run := func(t *testing.T, o Options) (*report.DiagnoseReport, report.DiagnoseStep) {
		t.Helper()
		d := &diagnosis{
			o: o,
			r: &report.DiagnoseReport{Sweep: &report.SweepReport{
				Nodes:   []report.SweepNode{{PlannedNode: report.PlannedNode{Name: node.Name}, Status: report.SweepFail, Verdict: fail}},
				Verdict: report.SweepVerdict{Status: verdict.StatusFail, Code: fail.Code, Endpoint: fail.Endpoint, Role: fail.Role},
			}},
			deadline: time.Now().Add(30 * time.Second),
			nodes:    map[string]NodeRef{node.Name: node},
		}
		d.audit(t.Context())
		for _, s := range d.r.Steps {
			if s.Name == "audit" {
				return d.r, s
			}
		}
		t.Fatalf("no audit step: %+v", d.r.Steps)
		return nil, report.DiagnoseStep{}
	}

	t.Run("a credential that reads", func(t *testing.T) {
		srv := armfake.New(m)
		defer srv.Close()
		r, step := run(t, Options{Live: &Live{Options: map[nodeplace.Cloud]audit.Live{nodeplace.Azure: azaudit.LiveOptions{Credential: armfake.Credential{}, ClientOptions: srv.ClientOptions()}}}})
		want := "live as application " + armfake.AppID + " (object " + armfake.ObjectID + ") in tenant " + armfake.TenantID + ", cluster aks-prod in resource group rg-aks"
		if step.Status != report.DiagnoseRan || !strings.Contains(step.Summary, want) {
			t.Fatalf("audit step = %+v, want it ran %s", step, want)
		}
		if n := srv.Calls()["GET managedClusters"]; n < 2 {
			t.Errorf("managedClusters calls = %d, want the subscription's list and the cluster's show", n)
		}
		folder, _ := run(t, Options{Auditors: map[nodeplace.Cloud]Auditor{nodeplace.Azure: azaudit.Provider.Folder(azureFixture)}})
		if r.Audit == nil || folder.Audit == nil || len(r.Audit.Changes) == 0 {
			t.Fatalf("live audit %+v, folder audit %+v: want both, with changes", r.Audit, folder.Audit)
		}
		if !reflect.DeepEqual(r.Audit.Changes, folder.Audit.Changes) || !reflect.DeepEqual(r.Audit.Verdict, folder.Audit.Verdict) {
			t.Errorf("live changes %+v verdict %+v; folder's %+v %+v: want the same", r.Audit.Changes, r.Audit.Verdict, folder.Audit.Changes, folder.Audit.Verdict)
		}
	})

	t.Run("no credentials", func(t *testing.T) {
		srv := armfake.New(m)
		defer srv.Close()
		_, step := run(t, Options{Live: &Live{Options: map[nodeplace.Cloud]audit.Live{nodeplace.Azure: azaudit.LiveOptions{Credential: refusedCredential{}, ClientOptions: srv.ClientOptions()}}}})
		if step.Status != report.DiagnoseSkipped || !strings.Contains(step.Reason, "no usable azure credentials") || strings.Contains(step.Reason, "\n") {
			t.Errorf("audit step = %+v, want skipped for want of credentials, on one line", step)
		}
		if !strings.Contains(step.Next, "pullpath azure collect --subscription "+sub+" --resource-group RG --name CLUSTER") || !strings.Contains(step.Next, "effectiveRouteTable") {
			t.Errorf("next = %q, want the collect command with the subscription and the permissions", step.Next)
		}
		if srv.Requests != 0 {
			t.Errorf("ARM got %d requests without a token", srv.Requests)
		}
	})

	t.Run("a denied list", func(t *testing.T) {
		srv := armfake.New(m)
		defer srv.Close()
		srv.Deny("GET managedClusters", "Microsoft.ContainerService/managedClusters/read")
		_, step := run(t, Options{Live: &Live{Options: map[nodeplace.Cloud]audit.Live{nodeplace.Azure: azaudit.LiveOptions{Credential: armfake.Credential{}, ClientOptions: srv.ClientOptions()}}}})
		if step.Status != report.DiagnoseFailed || !strings.Contains(step.Next, "Microsoft.ContainerService/managedClusters/read (denied to application "+armfake.AppID) {
			t.Errorf("audit step = %+v, want failed, naming the permission and who lacks it", step)
		}
	})
}

// Issue 42: diagnose gives the Azure audit the failing image, as it does
// AWS's and GCP's: live, its login server picks the registry among the
// subscription's (not the one the kubelet identity holds a role on);
// from --from-azure, a folder of another registry says so.
func TestDiagnoseAzureAuditTakesTheImage(t *testing.T) {
	m, err := azaudit.Load(os.DirFS("../audit/azure/testdata/valid-healthy"))
	if err != nil {
		t.Fatal(err)
	}
	sub := strings.Split(strings.Trim(*m.Cluster.ID, "/"), "/")[1]
	node := NodeRef{Name: "aks-apps-12345678-vmss000000",
		ProviderID: "azure:///subscriptions/" + sub + "/resourceGroups/" + *m.Cluster.Properties.NodeResourceGroup + "/providers/Microsoft.Compute/virtualMachineScaleSets/aks-apps-12345678-vmss/virtualMachines/0"}
	audited := func(t *testing.T, o Options) *report.AuditReport {
		t.Helper()
		d := &diagnosis{o: o, r: &report.DiagnoseReport{}, deadline: time.Now().Add(30 * time.Second), nodes: map[string]NodeRef{node.Name: node},
			group: &report.ExplainGroup{Image: "fabrikamacr.azurecr.io/shop/web:1.4", Code: verdict.ConnectTimeout, Endpoint: "fabrikamacr.azurecr.io:443",
				Nodes: []report.ExplainNode{{Name: node.Name, Status: report.NodeStatusFailed}}}}
		d.audit(t.Context())
		if d.r.Audit == nil {
			t.Fatalf("no audit: steps %+v", d.r.Steps)
		}
		return d.r.Audit
	}
	srv := armfake.New(m)
	defer srv.Close()
	srv.AddRegistry(m, "fabrikamacr")
	live := audited(t, Options{Live: &Live{Options: map[nodeplace.Cloud]audit.Live{nodeplace.Azure: azaudit.LiveOptions{Credential: armfake.Credential{}, ClientOptions: srv.ClientOptions()}}}})
	if live.Target.Registry != "fabrikamacr.azurecr.io" {
		t.Errorf("live audit of registry %q, want the image's fabrikamacr.azurecr.io", live.Target.Registry)
	}
	folder := audited(t, Options{Auditors: map[nodeplace.Cloud]Auditor{nodeplace.Azure: azaudit.Provider.Folder("../audit/azure/testdata/valid-healthy")}})
	warned := false
	for _, w := range folder.Warnings {
		warned = warned || strings.Contains(w.Message, "the image's registry is fabrikamacr.azurecr.io, acr-show.json describes contosoacr.azurecr.io")
	}
	if !warned {
		t.Errorf("--from-azure of another registry: warnings %+v, want one naming both", folder.Warnings)
	}
}
