package azure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

const (
	sub      = "/subscriptions/3f2b6c1e-8d4a-4b7e-9c1f-2a5d6e7f8a9b"
	vnetAKS  = sub + "/resourceGroups/rg-net/providers/Microsoft.Network/virtualNetworks/vnet-aks"
	snetApps = vnetAKS + "/subnets/snet-apps"
	snetSys  = vnetAKS + "/subnets/snet-system"
	acrID    = sub + "/resourceGroups/rg-acr/providers/Microsoft.ContainerRegistry/registries/contosoacr"
	zoneID   = sub + "/resourceGroups/rg-dns/providers/Microsoft.Network/privateDnsZones/privatelink.azurecr.io"
	peerID   = vnetAKS + "/virtualNetworkPeerings/aks-to-hub"
	peID     = sub + "/resourceGroups/rg-shared/providers/Microsoft.Network/privateEndpoints/pe-contosoacr"
)

func auditDir(t *testing.T, dir string) *report.AuditReport {
	t.Helper()
	m, err := Load(os.DirFS(filepath.Join("testdata", dir)))
	if err != nil {
		t.Fatalf("Load(%s) = %v", dir, err)
	}
	return Audit(m, dir, audit.Focus{})
}

func TestHealthyPasses(t *testing.T) {
	for _, dir := range []string{"valid-healthy", "valid-abac-repository-reader"} {
		t.Run(dir, func(t *testing.T) {
			r := auditDir(t, dir)
			if r.Verdict.Status != report.StepPass || exitCode(r) != 0 {
				t.Fatalf("verdict = %s (%s), exit %d; want pass, 0", r.Verdict.Status, r.Verdict.Summary, exitCode(r))
			}
			if len(r.Subnets) != 2 || len(r.Changes) != 0 || len(r.Warnings) != 0 {
				t.Fatalf("subnets %d, changes %v, warnings %v; want 2 subnets, no change, no warning", len(r.Subnets), r.Changes, r.Warnings)
			}
			if len(r.Hosts) != 3 {
				t.Fatalf("hosts = %v, want the login server and two data endpoints", r.Hosts)
			}
			for _, s := range r.Subnets {
				if !strings.HasPrefix(s.ID, vnetAKS+"/subnets/") {
					t.Errorf("subnet id %q is not the full ARM subnet id", s.ID)
				}
				if len(s.Checks) != len(Checks) {
					t.Errorf("%s: %d checks, want %d", s.Name, len(s.Checks), len(Checks))
				}
			}
		})
	}
}

// Every check has a fixture that fails it alone: the named check fails on
// the named subnets, no other check fails, and the change names the object.
func TestEachCheckFailsAlone(t *testing.T) {
	tests := []struct {
		dir      string
		check    string
		subnets  []string // failing subnets
		exit     int
		summary  string // in the failing check's summary
		resource string // the change's resource
		command  string // in the change's command
	}{
		{"invalid-route-disable-bgp", "route", []string{snetApps}, 3,
			"rt-apps has disableBgpRoutePropagation: true, so pool apps has no route to 10.50.1.4",
			sub + "/resourceGroups/rg-net/providers/Microsoft.Network/routeTables/rt-apps", "az network route-table update -g rg-net -n rt-apps --disable-bgp-route-propagation false"},
		{"invalid-route-udr-none", "route", []string{snetApps}, 3,
			"route block-shared in rt-apps sends 10.50.1.4",
			sub + "/resourceGroups/rg-net/providers/Microsoft.Network/routeTables/rt-apps/routes/block-shared", "az network route-table route delete -g rg-net --route-table-name rt-apps -n block-shared"},
		{"invalid-peering-no-remote-gateways", "peering", []string{snetSys, snetApps}, 3,
			"useRemoteGateways: false on aks-to-hub", peerID, "--set useRemoteGateways=true"},
		{"invalid-peering-disconnected", "peering", []string{snetSys, snetApps}, 3,
			"peering aks-to-hub to " + sub + "/resourceGroups/rg-hub/providers/Microsoft.Network/virtualNetworks/vnet-hub is Disconnected", peerID, "az network vnet peering show"},
		{"invalid-peering-forwarded-traffic", "peering", []string{snetSys, snetApps}, 3,
			"allowForwardedTraffic: false", peerID, "--set allowForwardedTraffic=true"},
		{"invalid-nsg-deny-443", "nsg-egress-443", []string{snetApps}, 3,
			"nsg-apps denies TCP 443 from pool apps to 10.50.1.4 (contosoacr.azurecr.io): rule deny-shared-443 (priority 200)",
			sub + "/resourceGroups/rg-net/providers/Microsoft.Network/networkSecurityGroups/nsg-apps", "--priority 199 --direction Outbound --access Allow --protocol Tcp --source-address-prefixes 10.10.4.0/22 --destination-address-prefixes 10.50.1.4/32"},
		{"invalid-dns-servers-unreachable", "dns-servers", []string{snetSys, snetApps}, 4,
			"no route to DNS server 10.99.0.53", vnetAKS, "az network vnet update -g rg-net -n vnet-aks --dns-servers 168.63.129.16"},
		{"invalid-dns-zone-not-linked", "dns-zone-link", []string{snetSys, snetApps}, 4,
			"privatelink.azurecr.io is not linked to vnet-aks", zoneID, "az network private-dns link vnet create -g rg-dns -z privatelink.azurecr.io -n vnet-aks-link -v " + vnetAKS},
		{"invalid-dns-record-missing", "dns-records", []string{snetSys, snetApps}, 4,
			"A record contosoacr.westeurope.data is missing", zoneID + "/A/contosoacr.westeurope.data", "az network private-dns record-set a add-record -g rg-dns -z privatelink.azurecr.io -n contosoacr.westeurope.data -a 10.50.1.6"},
		{"invalid-dns-record-wrong-address", "dns-records", []string{snetSys, snetApps}, 4,
			"A record contosoacr.eastus.data in privatelink.azurecr.io points at 10.50.1.9", zoneID + "/A/contosoacr.eastus.data", "remove-record -g rg-dns -z privatelink.azurecr.io -n contosoacr.eastus.data -a 10.50.1.9"},
		{"invalid-private-endpoint-pending", "private-endpoint", []string{snetSys, snetApps}, 3,
			"private endpoint pe-contosoacr's connection to registry contosoacr is Pending", acrID + "/privateEndpointConnections/pe-contosoacr.6f1c2d3e", "az acr private-endpoint-connection approve -r contosoacr -n pe-contosoacr.6f1c2d3e"},
		{"invalid-private-endpoint-uncovered-replica", "private-endpoint", []string{snetSys, snetApps}, 4,
			"no private endpoint of registry contosoacr has an address for contosoacr.westeurope.data.azurecr.io", peID, "az network private-endpoint show -g rg-shared -n pe-contosoacr"},
		{"invalid-public-access-disabled", "public-access", []string{snetSys, snetApps}, 3,
			"registry contosoacr has publicNetworkAccess Disabled", acrID, "az acr update -n contosoacr --public-network-enabled true"},
		{"invalid-identity-no-acrpull", "identity-acrpull", []string{snetSys, snetApps}, 6,
			"kubelet identity 5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f has no AcrPull on contosoacr", acrID, "az role assignment create --assignee-object-id 5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f --assignee-principal-type ServicePrincipal --role \"AcrPull\" --scope " + acrID},
		{"invalid-identity-abac-acrpull", "identity-acrpull", []string{snetSys, snetApps}, 6,
			"which registry contosoacr does not honor", acrID, "--role \"Container Registry Repository Reader\""},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.check] = true
		t.Run(tt.dir, func(t *testing.T) {
			r := auditDir(t, tt.dir)
			if got := exitCode(r); got != tt.exit {
				t.Errorf("exit = %d, want %d (%s)", got, tt.exit, r.Verdict.Summary)
			}
			failing := map[string]bool{}
			for _, s := range r.Subnets {
				for _, c := range s.Checks {
					if c.Status != report.StepFail {
						continue
					}
					if c.ID != tt.check {
						t.Errorf("%s: check %s fails too: %s", s.Name, c.ID, c.Summary)
						continue
					}
					failing[s.ID] = true
					if !strings.Contains(c.Summary, tt.summary) {
						t.Errorf("%s: summary %q, want it to contain %q", s.Name, c.Summary, tt.summary)
					}
				}
			}
			if len(failing) != len(tt.subnets) {
				t.Errorf("failing subnets = %v, want %v", failing, tt.subnets)
			}
			for _, id := range tt.subnets {
				if !failing[id] {
					t.Errorf("subnet %s does not fail %s", id, tt.check)
				}
			}
			var found bool
			for _, ch := range r.Changes {
				if ch.Check == tt.check && ch.Resource == tt.resource && strings.Contains(ch.Command, tt.command) {
					found = true
				}
			}
			if !found {
				t.Errorf("changes = %+v, want one for %s on %s with %q", r.Changes, tt.check, tt.resource, tt.command)
			}
			if len(tt.subnets) == len(r.Subnets) && r.Verdict.Scope != audit.ScopeEverySubnet {
				t.Errorf("scope = %q, want every-subnet", r.Verdict.Scope)
			}
			if len(tt.subnets) < len(r.Subnets) {
				if r.Comparison == nil || r.Comparison.Failing != snetApps || r.Comparison.Healthy != snetSys {
					t.Errorf("comparison = %+v, want snet-apps beside snet-system", r.Comparison)
				}
			}
		})
	}
	covered[CheckProxy] = true // its worst is a warning: TestProxyCheck
	covered[CheckIPv6] = true  // its worst is a warning: TestIPv6Check
	// the cache checks fail for an image a rule serves: TestEachCacheFixtureFailsItsCheckAlone
	covered[CheckCacheCredSet], covered[CheckCacheKeyVault] = true, true
	for _, id := range CheckIDs() {
		if !covered[id] {
			t.Errorf("check %s has no fixture that fails it", id)
		}
	}
}

// The cluster's httpProxyConfig decides, per host, whether containerd goes
// through the proxy; a private endpoint's host through it is a warning
// naming the cluster, and an IP entry in noProxy is said not to match.
func TestProxyCheck(t *testing.T) {
	const clusterID = sub + "/resourceGroups/rg-aks/providers/Microsoft.ContainerService/managedClusters/aks-prod"
	for _, tt := range []struct {
		dir     string
		status  report.StepStatus
		summary string
	}{
		{"valid-healthy", report.StepSkip, "has no httpProxyConfig"},
		{"valid-proxy-noproxy-registry", report.StepPass, "noProxy sends every host of the pull direct"},
		{"warn-proxy-private-endpoint-through-proxy", report.StepWarn, "containerd sends contosoacr.azurecr.io, contosoacr.eastus.data.azurecr.io, contosoacr.westeurope.data.azurecr.io through the cluster's proxy"},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			r := auditDir(t, tt.dir)
			for _, s := range r.Subnets {
				var c *report.CheckResult
				for i := range s.Checks {
					if s.Checks[i].ID == CheckProxy {
						c = &s.Checks[i]
					}
				}
				if c == nil {
					t.Fatalf("%s: no %s check", s.Name, CheckProxy)
				}
				if c.Status != tt.status || !strings.Contains(c.Summary, tt.summary) {
					t.Errorf("%s: %s %q, want %s containing %q", s.Name, c.Status, c.Summary, tt.status, tt.summary)
				}
				if tt.status != report.StepWarn {
					continue
				}
				ev := strings.Join(c.Evidence, "\n")
				if !strings.Contains(ev, "10.50.1.0/24") || !strings.Contains(ev, "never match the name") {
					t.Errorf("%s: evidence %q does not say noProxy's CIDR entry never matches the name", s.Name, ev)
				}
			}
			if tt.status != report.StepWarn {
				return
			}
			var found bool
			for _, ch := range r.Changes {
				if ch.Check == CheckProxy && ch.Resource == clusterID && strings.Contains(ch.Command, "az aks update -g rg-aks -n aks-prod --http-proxy-config") && strings.Contains(ch.Action, ".azurecr.io") {
					found = true
				}
			}
			if !found {
				t.Errorf("changes = %+v, want one on the cluster adding .azurecr.io to noProxy", r.Changes)
			}
			if exitCode(r) != 0 {
				t.Errorf("exit = %d, want 0 (a warning does not fail the audit)", exitCode(r))
			}
		})
	}
}

// The identity rule is internal/audit.Finish's (one cause for every
// subnet); the azure audit does not repeat it.
func TestIdentityFailsEveryPoolAlike(t *testing.T) {
	r := auditDir(t, "invalid-identity-no-acrpull")
	want := "every subnet fails the same way (" + CheckIdentity + "): one cause for every subnet: identity, not network: "
	if r.Verdict.Scope != audit.ScopeEverySubnet || r.Verdict.Condition != verdict.ConditionTLSIdentity || !strings.HasPrefix(r.Verdict.Summary, want) || strings.Count(r.Verdict.Summary, "identity, not network") != 1 {
		t.Fatalf("verdict = %+v, want every-subnet tls-identity saying once %q", r.Verdict, want)
	}
}

// exitCode is the CLI's rule (internal/cli/exit.go): 0 unless a subnet
// fails, then the condition's code.
func exitCode(r *report.AuditReport) int {
	c, failed := audit.Condition(r)
	if !failed {
		return 0
	}
	return map[verdict.Condition]int{verdict.ConditionRoute: 3, verdict.ConditionDNS: 4, verdict.ConditionEndpointSet: 5, verdict.ConditionTLSIdentity: 6, verdict.ConditionRegistry: 8}[c]
}

// TestResourcesNamedOnce: no check result of any fixture lists an object
// twice among its resources (a peering or private endpoint that is both
// the finding's object and one the walk crossed was listed twice).
func TestResourcesNamedOnce(t *testing.T) {
	dirs, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		r := auditDir(t, d.Name())
		for _, s := range r.Subnets {
			for _, c := range s.Checks {
				seen := map[string]bool{}
				for _, id := range c.Resources {
					if seen[id] {
						t.Errorf("%s: %s's %s lists %s twice: %v", d.Name(), s.Name, c.ID, id, c.Resources)
					}
					seen[id] = true
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no check results read from testdata")
	}
}
