package azure

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/audit/audittest"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// managedVNetDir is the healthy account on an AKS-managed VNet: the VNet
// in the node resource group (aks-vnet-12345678), no vnetSubnetId in the
// pools, the VNet as `az network vnet list -g NODE_RG` prints it (an ARM
// page here) instead of network-vnet-show.json.
func managedVNetDir(t *testing.T, rolesFrom string) string {
	t.Helper()
	d := t.TempDir()
	entries, err := os.ReadDir("testdata/valid-healthy")
	if err != nil {
		t.Fatal(err)
	}
	rewrite := strings.NewReplacer("resourceGroups/rg-net/", "resourceGroups/MC_rg-aks_aks-prod_eastus/", "vnet-aks", "aks-vnet-12345678")
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join("testdata/valid-healthy", e.Name()))
		if e.Name() == FileRoles && rolesFrom != "" {
			data, _ = os.ReadFile(filepath.Join("testdata", rolesFrom, FileRoles))
		}
		data = []byte(rewrite.Replace(string(data)))
		switch e.Name() {
		case FileAKS:
			var v map[string]any
			json.Unmarshal(data, &v)
			for _, p := range v["agentPoolProfiles"].([]any) {
				delete(p.(map[string]any), "vnetSubnetId")
			}
			data, _ = json.Marshal(v)
		case FileVNet:
			var v any
			json.Unmarshal(data, &v)
			data, _ = json.Marshal(map[string]any{"value": []any{v}})
			os.WriteFile(filepath.Join(d, FileVNets), data, 0o644)
			continue
		}
		os.WriteFile(filepath.Join(d, e.Name()), data, 0o644)
	}
	return d
}

// Issue 42: an AKS cluster on the VNet AKS made itself is audited: the
// node subnet is found in the node resource group's VNet list, and the
// report says which file named it.
func TestAKSManagedVNet(t *testing.T) {
	d := managedVNetDir(t, "")
	r, err := FromFolder(d, audit.Focus{})
	if err != nil {
		t.Fatal(err)
	}
	if audit.NothingChecked(r) || len(r.Subnets) != 1 || r.Subnets[0].Unknown {
		t.Fatalf("verdict %+v, %d subnets: want the managed VNet's node subnet audited", r.Verdict, len(r.Subnets))
	}
	s := r.Subnets[0]
	if !strings.Contains(s.ID, "/resourceGroups/MC_rg-aks_aks-prod_eastus/providers/Microsoft.Network/virtualNetworks/aks-vnet-12345678/subnets/") || len(s.Pools) != 2 {
		t.Errorf("subnet %s pools %v, want the node resource group's subnet holding both pools", s.ID, s.Pools)
	}
	for _, c := range s.Checks {
		if c.Status == report.StepFail {
			t.Errorf("%s fails: %s", c.ID, c.Summary)
		}
	}
	named := false
	for _, w := range r.Warnings {
		named = named || w.File == FileVNets && strings.Contains(w.Message, "read from "+FileVNets)
	}
	if !named {
		t.Errorf("no warning says the subnet came from %s: %+v", FileVNets, r.Warnings)
	}
}

// Without the node resource group's list, the cluster-wide checks still
// run: a healthy identity is nothing-checked (exit 11, naming the file),
// a missing AcrPull fails (the identity's exit code).
func TestAKSManagedVNetWithoutTheListRunsClusterWideChecks(t *testing.T) {
	d := managedVNetDir(t, "")
	os.Remove(filepath.Join(d, FileVNets))
	r, err := FromFolder(d, audit.Focus{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Subnets) != 1 || !r.Subnets[0].Unknown || !audit.NothingChecked(r) || !containsFold(r.Verdict.Missing, FileVNets) {
		t.Fatalf("verdict %+v, subnets %d: want one unknown subnet, nothing-checked, %s missing", r.Verdict, len(r.Subnets), FileVNets)
	}
	ran := map[string]report.StepStatus{}
	for _, c := range r.Subnets[0].Checks {
		ran[c.ID] = c.Status
	}
	if ran[CheckIdentity] != report.StepPass || ran[CheckPublicAccess] == report.StepWarn || ran[CheckRoute] != report.StepWarn {
		t.Errorf("checks %v: want identity and public access decided, route warned", ran)
	}
	d = managedVNetDir(t, "invalid-identity-no-acrpull")
	os.Remove(filepath.Join(d, FileVNets))
	r, err = FromFolder(d, audit.Focus{})
	if err != nil {
		t.Fatal(err)
	}
	if c, failed := audit.Condition(r); !failed || c != verdict.ConditionTLSIdentity {
		t.Errorf("verdict %+v: want the identity failure though the subnet is unknown", r.Verdict)
	}
}

// Issue 42: every file of the healthy accounts removed in turn: no pool
// fails, a warning names the file; the two required files are a one-line
// error naming them.
func TestMissingFileNeverFailsASubnet(t *testing.T) {
	for _, dir := range []string{"valid-healthy", "valid-abac-repository-reader", "valid-dualstack-public", "valid-proxy-noproxy-registry", "valid-aks-managed-vnet"} {
		audittest.MissingFileNeverFails(t, audittest.Account{Dir: filepath.Join("testdata", dir), From: FromFolder, Required: []string{FileAKS, FileACR}})
	}
}

// armPages splits a list file (the CLI's array, or one ARM page) in two
// ARM pages, the first naming the next by nextLink.
func armPages(t *testing.T, data []byte) (p1, p2 []byte, ok bool) {
	t.Helper()
	var items []json.RawMessage
	if json.Unmarshal(data, &items) != nil {
		var page struct{ Value []json.RawMessage }
		if json.Unmarshal(data, &page) != nil || page.Value == nil {
			return nil, nil, false
		}
		items = page.Value
	}
	half := len(items) / 2
	p1, _ = json.Marshal(map[string]any{"value": items[:half], "nextLink": "https://management.azure.com/subscriptions/x/providers/y?api-version=2024-05-01&%24skiptoken=eyJuZXh0IjoyfQ"})
	p2, _ = json.Marshal(map[string]any{"value": items[half:]})
	return p1, p2, true
}

// Issue 42, item 4: every list file of each healthy account as ARM's list
// pages (two, one after the other or in an array) audits the same, one
// file at a time; the raw ARM objects are TestRawARMAndCLIShapesReadAlike's.
func TestEveryListFileReadsAsARMPages(t *testing.T) {
	shapes := map[string]audittest.Reshape{
		"pages-one-after-another": func(t *testing.T, name string, data []byte) ([]byte, bool) {
			p1, p2, ok := armPages(t, data)
			return append(append(p1, '\n'), p2...), ok
		},
		"pages-in-an-array": func(t *testing.T, name string, data []byte) ([]byte, bool) {
			p1, p2, ok := armPages(t, data)
			return []byte("[" + string(p1) + ",\n" + string(p2) + "]"), ok
		},
	}
	for _, dir := range []string{"valid-healthy", "valid-aks-managed-vnet", "valid-dualstack-public"} {
		for shape, reshape := range shapes {
			audittest.ReadsReshaped(t, audittest.Account{Dir: filepath.Join("testdata", dir), From: FromFolder}, shape, reshape)
		}
	}
	// and the artifact cache's lists, audited for the image a rule serves
	for shape, reshape := range shapes {
		audittest.ReadsReshaped(t, audittest.Account{Dir: filepath.Join("testdata", "valid-cache-rule"), From: FromFolder, Focus: audit.Focus{Image: cacheImage}}, shape, reshape)
	}
}
