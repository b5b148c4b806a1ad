package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	azaudit "github.com/pullpath/pullpath/internal/audit/azure"
	"github.com/pullpath/pullpath/internal/audit/azure/armfake"
	"github.com/pullpath/pullpath/internal/exitcode"
	"github.com/pullpath/pullpath/internal/nodeplace"
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
			if r.Kind != report.AzureAuditKind || r.APIVersion != "pullpath/v1" || len(r.Subnets) != 2 {
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
	serveAzureFixture(t, "invalid-route-disable-bgp")

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

// Issue 42: `azure audit IMAGE` as aws and gcp: the image's login server
// names the registry live (among several; --registry overrides it), a
// folder describing another registry says so, an image that is not ACR's
// is one line, and collect takes the image too.
func TestAzureAuditImage(t *testing.T) {
	code, out, errOut := runCLI(t, "", "azure", "audit", "contosoacr.azurecr.io/shop/web:1.4", "--from", azureFixtures+"valid-healthy", "-o", "json")
	var r report.AuditReport
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("audit IMAGE --from = exit %d %q", code, errOut)
	}
	for _, w := range r.Warnings {
		if strings.Contains(w.Message, "image's registry") {
			t.Errorf("the folder's own registry warned: %s", w.Message)
		}
	}
	code, out, _ = runCLI(t, "", "azure", "audit", "fabrikamacr.azurecr.io/shop/web:1.4", "--from", azureFixtures+"valid-healthy", "-o", "json")
	r = report.AuditReport{}
	if json.Unmarshal([]byte(out), &r) != nil || code != 0 || !hasWarning(r, "the image's registry is fabrikamacr.azurecr.io, acr-show.json describes contosoacr.azurecr.io") {
		t.Errorf("audit IMAGE of another registry --from = exit %d, warnings %+v: want one naming both registries", code, r.Warnings)
	}
	code, _, errOut = runCLI(t, "", "azure", "audit", "docker.io/library/nginx:1.27", "--from", azureFixtures+"valid-healthy")
	if code != 1 || !strings.Contains(errOut, "docker.io is not an ACR login server") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("audit of a Docker Hub image = exit %d %q, want one line", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "azure", "audit", "contosoacr.azurecr.io/shop/web:1.4", "--from", azureFixtures+"valid-healthy", "--registry", "contosoacr")
	if code != 1 || !strings.Contains(errOut, "takes no") {
		t.Errorf("--from with --registry = exit %d %q, want a usage error", code, errOut)
	}

	// live: two registries in the subscription; the kubelet identity holds
	// a role on contosoacr only, the image names fabrikamacr
	srv, m := serveAzureFixture(t, "valid-healthy")
	srv.AddRegistry(m, "fabrikamacr")
	live := []string{"-g", "rg-aks", "-n", "aks-prod", "--subscription", "3f2b6c1e-8d4a-4b7e-9c1f-2a5d6e7f8a9b", "-o", "json"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fabrikamacr.azurecr.io/shop/web:1.4"}, "fabrikamacr.azurecr.io"},
		{[]string{"contosoacr.azurecr.io/shop/web:1.4"}, "contosoacr.azurecr.io"},
		{[]string{"fabrikamacr.azurecr.io/shop/web:1.4", "--registry", "contosoacr"}, "contosoacr.azurecr.io"},
		{nil, "contosoacr.azurecr.io"},
	} {
		code, out, errOut := runCLI(t, "", append(append([]string{"azure", "audit"}, tc.args...), live...)...)
		r := report.AuditReport{}
		if json.Unmarshal([]byte(out), &r) != nil || r.Target.Registry != tc.want {
			t.Errorf("azure audit %v live = exit %d, registry %q (%s); want %s", tc.args, code, r.Target.Registry, errOut, tc.want)
		}
	}
	code, _, errOut = runCLI(t, "", append([]string{"azure", "audit", "nope.azurecr.io/shop/web:1.4"}, live...)...)
	if code != 1 || !strings.Contains(errOut, "registry nope.azurecr.io: no such registry in subscription") {
		t.Errorf("audit of an image in no registry of the subscription = exit %d %q", code, errOut)
	}
	dir := filepath.Join(t.TempDir(), "bundle")
	code, out, errOut = runCLI(t, "", append([]string{"azure", "collect", "fabrikamacr.azurecr.io/shop/web:1.4", "--out", dir}, live[:6]...)...)
	if code != 0 || !strings.Contains(out, "pullpath azure audit fabrikamacr.azurecr.io/shop/web:1.4 --from "+dir) {
		t.Fatalf("collect IMAGE = exit %d %q %q", code, out, errOut)
	}
	data, _ := os.ReadFile(filepath.Join(dir, azaudit.FileACR))
	if !strings.Contains(string(data), `"loginServer": "fabrikamacr.azurecr.io"`) {
		t.Errorf("collect IMAGE wrote acr-show.json of another registry:\n%.300s", data)
	}
}

// Issue 42: an audit that could check nothing exits 11, not 0: an
// AKS-managed VNet without the node resource group's VNet list.
func TestAzureAuditNothingCheckedExits11(t *testing.T) {
	dir := t.TempDir()
	src := azureFixtures + "valid-aks-managed-vnet"
	entries, _ := os.ReadDir(src)
	for _, e := range entries {
		if e.Name() != azaudit.FileVNets {
			data, _ := os.ReadFile(filepath.Join(src, e.Name()))
			os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644)
		}
	}
	if code, _, errOut := runCLI(t, "", "azure", "audit", "--from", src); code != 0 {
		t.Fatalf("the managed VNet with its list = exit %d (%s), want 0", code, errOut)
	}
	if code, out, _ := runCLI(t, "", "azure", "audit", "--from", dir); code != 11 || !strings.Contains(out, azaudit.FileVNets) {
		t.Errorf("without %s = exit %d, want 11 naming the file:\n%s", azaudit.FileVNets, code, out)
	}
}

func hasWarning(r report.AuditReport, s string) bool {
	for _, w := range r.Warnings {
		if strings.Contains(w.Message, s) {
			return true
		}
	}
	return false
}

// Issue 42: each cloud audit's help gives exit 11 (nothing could be
// checked) from the table, beside the conditions it exits with.
func TestAuditHelpGivesNothingChecked(t *testing.T) {
	r, _ := rowOf(exitcode.Undecided)
	line := regexp.MustCompile(`(?m)^\s+11\s+` + regexp.QuoteMeta(strings.ReplaceAll(r.Meaning, "`", "")) + `$`)
	for _, c := range nodeplace.Clouds {
		if help := helpOf(t, string(c), "audit"); !line.MatchString(help) {
			t.Errorf("pullpath %s audit --help does not give exit 11 (%s):\n%s", c, r.Meaning, help)
		}
	}
}

// Issue 39 through the CLI: collect IMAGE writes the artifact cache's
// files (the rule, the credential sets, the vault and the set's identity's
// roles on it), and audit IMAGE --from that folder and live agree: the
// credential set's identity may not read its Key Vault secrets, exit 8
// (registry), the change the role assignment on the vault.
func TestAzureCollectThenAuditCacheRule(t *testing.T) {
	const image = "contosoacr.azurecr.io/library/nginx:1.27"
	serveAzureFixture(t, "invalid-cache-keyvault-no-role")

	live := []string{"-g", "rg-aks", "-n", "aks-prod", "--subscription", "3f2b6c1e-8d4a-4b7e-9c1f-2a5d6e7f8a9b"}
	dir := filepath.Join(t.TempDir(), "bundle")
	code, out, errOut := runCLI(t, "", append([]string{"azure", "collect", image, "--out", dir}, live...)...)
	if code != 0 || !strings.Contains(out, "wrote 21 files to "+dir) {
		t.Fatalf("collect = exit %d, %q %q", code, out, errOut)
	}
	for _, f := range []string{azaudit.FileCacheRules, azaudit.FileCredSets, azaudit.FileVault("kv-contoso-acr"), azaudit.FileVaultRoles("kv-contoso-acr")} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("collect IMAGE did not write %s", f)
		}
	}
	codeFrom, outFrom, _ := runCLI(t, "", "azure", "audit", image, "--from", dir)
	codeLive, outLive, errLive := runCLI(t, "", append([]string{"azure", "audit", image}, live...)...)
	const change = `az role assignment create --assignee-object-id 8c9d0e1f-2a3b-4c5d-9e6f-7a8b9c0d1e2f --assignee-principal-type ServicePrincipal --role "Key Vault Secrets User" --scope /subscriptions/3f2b6c1e-8d4a-4b7e-9c1f-2a5d6e7f8a9b/resourceGroups/rg-security/providers/Microsoft.KeyVault/vaults/kv-contoso-acr`
	if codeFrom != 8 || codeLive != 8 || !strings.Contains(outFrom, change) || !strings.Contains(outLive, change) {
		t.Fatalf("exit --from %d, live %d (%s); want 8 and 8 with %q:\n%s", codeFrom, codeLive, errLive, change, outFrom)
	}
}

// serveAzureFixture serves a fixture folder from a loopback ARM server
// behind the real SDK clients the azure commands use, until the test ends.
func serveAzureFixture(t *testing.T, fixture string) (*armfake.Server, *azaudit.Model) {
	t.Helper()
	m, err := azaudit.Load(os.DirFS(azureFixtures + fixture))
	if err != nil {
		t.Fatal(err)
	}
	srv := armfake.New(m)
	azureARM.options, azureARM.credential = srv.ClientOptions(), armfake.Credential{}
	t.Cleanup(func() {
		azureARM.options, azureARM.credential = nil, nil
		srv.Close()
	})
	return srv, m
}
