//go:build !noclients

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	azaudit "github.com/pullpath/pullpath/internal/audit/azure"
	"github.com/pullpath/pullpath/internal/audit/azure/armfake"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

const azureFixtures = "../audit/azure/testdata/"

func TestAzureAuditExitCodes(t *testing.T) {
	tests := []struct {
		dir  string
		exit int
	}{
		{"valid-healthy", 0},
		{"invalid-route-disable-bgp", 3},
		{"invalid-peering-no-remote-gateways", 3},
		{"invalid-nsg-deny-443", 3},
		{"invalid-dns-zone-not-linked", 4},
		{"invalid-dns-record-missing", 4},
		{"invalid-identity-no-acrpull", 6},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "azure", "audit", "--from", azureFixtures+tt.dir, "-o", "json")
			if code != tt.exit {
				t.Fatalf("exit = %d, want %d; stderr %s", code, tt.exit, errOut)
			}
			var r report.AuditReport
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("-o json: %v", err)
			}
			if r.Kind != report.KindAzureAudit || r.APIVersion != "pullpath/v1" || len(r.Subnets) != 2 {
				t.Fatalf("report kind %q apiVersion %q subnets %d", r.Kind, r.APIVersion, len(r.Subnets))
			}
			if tt.exit != 0 && len(r.Changes) == 0 {
				t.Errorf("a failing audit lists no change")
			}
		})
	}
}

func TestAzureUsage(t *testing.T) {
	t.Setenv("AZURE_SUBSCRIPTION_ID", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"azure", "audit"}, "want --resource-group RG and --name CLUSTER"},
		{[]string{"azure", "audit", "-g", "rg"}, "want --resource-group RG and --name CLUSTER"},
		{[]string{"azure", "audit", "-g", "rg", "-n", "c"}, "want --subscription"},
		{[]string{"azure", "audit", "--from", azureFixtures + "valid-healthy", "-g", "rg"}, "takes no --resource-group"},
		{[]string{"azure", "audit", "--from", "/nonexistent"}, "--from /nonexistent: not a folder"},
		{[]string{"azure", "audit", "--from", azureFixtures + "valid-healthy", "-o", "xml"}, "xml"},
		{[]string{"azure", "collect", "-g", "rg", "-n", "c", "--subscription", "s"}, "want --out DIR"},
		{[]string{"azure", "audit", "--from", t.TempDir()}, "aks-show.json: missing: want the output of `az aks show"},
	} {
		code, _, errOut := runCLI(t, "", tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("pullpath %v = exit %d, stderr %q; want exit 1 and one line with %q", tc.args, code, errOut, tc.want)
		}
	}
}

// Live mode through the CLI: collect --out against a loopback ARM server,
// then audit --from the folder, and audit live: the same verdict.
func TestAzureCollectThenAudit(t *testing.T) {
	m, err := azaudit.Load(os.DirFS(azureFixtures + "invalid-route-disable-bgp"))
	if err != nil {
		t.Fatal(err)
	}
	srv := armfake.New(m)
	defer srv.Close()
	azureARM.options, azureARM.credential = srv.ClientOptions(), armfake.Credential{}
	defer func() { azureARM.options, azureARM.credential = nil, nil }()

	live := []string{"-g", "rg-aks", "-n", "aks-prod", "--subscription", "3f2b6c1e-8d4a-4b7e-9c1f-2a5d6e7f8a9b"}
	dir := filepath.Join(t.TempDir(), "bundle")
	code, out, errOut := runCLI(t, "", append([]string{"azure", "collect", "--out", dir}, live...)...)
	if code != 0 || !strings.Contains(out, "wrote 17 files to "+dir) {
		t.Fatalf("collect = exit %d, %q %q", code, out, errOut)
	}
	codeFrom, outFrom, _ := runCLI(t, "", "azure", "audit", "--from", dir, "-o", "json")
	codeLive, outLive, errLive := runCLI(t, "", append([]string{"azure", "audit", "-o", "json"}, live...)...)
	if codeFrom != 3 || codeLive != 3 {
		t.Fatalf("exit --from %d, live %d (%s); want 3 and 3", codeFrom, codeLive, errLive)
	}
	var a, b report.AuditReport
	if json.Unmarshal([]byte(outFrom), &a) != nil || json.Unmarshal([]byte(outLive), &b) != nil {
		t.Fatal("not JSON")
	}
	if a.Verdict.Summary != b.Verdict.Summary || len(a.Changes) != 1 || len(b.Changes) != 1 || a.Changes[0].Command != b.Changes[0].Command || a.Changes[0].Resource != b.Changes[0].Resource {
		t.Fatalf("--from and live differ:\n%+v %+v\n%+v %+v", a.Verdict, a.Changes, b.Verdict, b.Changes)
	}
	if b.Source != "live" {
		t.Errorf("live source = %q", b.Source)
	}
}

// --probe-report focuses the audit on the probed node's pool and failing
// host: a DNS_PUBLIC_ANSWER for the geo-replica's data endpoint points at
// the missing A record.
func TestAzureProbeReportFocus(t *testing.T) {
	pr := report.ProbeReport{APIVersion: "pullpath/v1", Kind: "ProbeReport", Node: "aks-apps-12345678-vmss000002",
		Reference: report.Reference{Registry: "contosoacr.azurecr.io", Host: "contosoacr.azurecr.io", Repository: "shop/web"},
		Verdict: verdict.Verdict{Status: verdict.StatusFail, Stage: verdict.StageBlob, Cause: verdict.CauseDNS, Condition: verdict.ConditionEndpointSet,
			Code: verdict.DNSPublicAnswer, Endpoint: "contosoacr.westeurope.data.azurecr.io", Role: verdict.RoleBlob}}
	data, _ := json.Marshal(pr)
	file := filepath.Join(t.TempDir(), "probe.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "azure", "audit", "--from", azureFixtures+"invalid-dns-record-missing", "--probe-report", file, "-o", "json")
	if code != 4 {
		t.Fatalf("exit = %d (%s), want 4", code, errOut)
	}
	var r report.AuditReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	apps := "/subscriptions/3f2b6c1e-8d4a-4b7e-9c1f-2a5d6e7f8a9b/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet-aks/subnets/snet-apps"
	if r.Target.FocusSubnet != apps || r.Subnets[0].ID != apps || r.Target.FocusHost != "contosoacr.westeurope.data.azurecr.io" {
		t.Fatalf("focus = %q first %q host %q; want the apps pool's subnet first and the data endpoint", r.Target.FocusSubnet, r.Subnets[0].ID, r.Target.FocusHost)
	}
	if !strings.HasPrefix(r.Verdict.Summary, "the probe's DNS_PUBLIC_ANSWER on contosoacr.westeurope.data.azurecr.io from apps: A record contosoacr.westeurope.data is missing") {
		t.Fatalf("verdict = %q", r.Verdict.Summary)
	}

	// the wrong file is one line
	code, _, errOut = runCLI(t, "", "azure", "audit", "--from", azureFixtures+"valid-healthy", "--probe-report", azureFixtures+"valid-healthy/aks-show.json")
	if code != 1 || !strings.Contains(errOut, "want ProbeReport") {
		t.Fatalf("--probe-report aks-show.json = exit %d %q", code, errOut)
	}
}
