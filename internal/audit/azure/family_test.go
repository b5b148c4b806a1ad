package azure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
)

// The IPv6 check: a dual-stack cluster pulling a dual-stack registry over
// its public endpoints warns (never fails: the nodes fall back to IPv4)
// where the ::/0 route or the NSG drops IPv6, naming the object; every
// other shape skips, saying why IPv6 is not on the path.
func TestIPv6Check(t *testing.T) {
	const rtApps = sub + "/resourceGroups/rg-net/providers/Microsoft.Network/routeTables/rt-apps"
	const nsgApps = sub + "/resourceGroups/rg-net/providers/Microsoft.Network/networkSecurityGroups/nsg-apps"
	for _, tt := range []struct {
		dir      string
		edit     func(*Model)
		apps     report.StepStatus // on snet-apps; snet-system passes or skips alike
		summary  string
		resource string // the change's, for a warn
		command  string
	}{
		{"valid-healthy", nil, report.StepSkip, "the cluster is IPv4-only", "", ""},
		{"valid-dualstack-public", nil, report.StepPass, "IPv6 from pool apps reaches contosoacr.azurecr.io", "", ""},
		{"valid-dualstack-public", func(m *Model) { m.EndpointProtocol = "IPv4" }, report.StepSkip, "has the IPv4 endpoint protocol: its names have only A records", "", ""},
		{"valid-healthy", func(m *Model) {
			v6 := armcontainerservice.IPFamilyIPv6
			m.Cluster.Properties.NetworkProfile.IPFamilies = append(m.Cluster.Properties.NetworkProfile.IPFamilies, &v6)
			m.EndpointProtocol = dualStackProtocol
		}, report.StepSkip, "goes through a private endpoint, which carries IPv4 only", "", ""},
		{"warn-ipv6-route-none", nil, report.StepWarn, "::/0 -> None (User route no-ipv6-egress) drops IPv6", rtApps + "/routes/no-ipv6-egress", "az network route-table route delete -g rg-net --route-table-name rt-apps -n no-ipv6-egress"},
		{"warn-ipv6-nsg-v4-only", nil, report.StepWarn, "nsg-apps denies TCP 443 over IPv6 from pool apps to contosoacr.azurecr.io: rule deny-internet (priority 300)", nsgApps, "--priority 299 --direction Outbound --access Allow --protocol Tcp --source-address-prefixes fd00:10:11::/64 --destination-address-prefixes ::/0"},
	} {
		t.Run(tt.dir+"/"+string(tt.apps), func(t *testing.T) {
			m, err := Load(os.DirFS(filepath.Join("testdata", tt.dir)))
			if err != nil {
				t.Fatal(err)
			}
			if tt.edit != nil {
				tt.edit(m)
			}
			r := Audit(m, tt.dir, audit.Focus{})
			for _, s := range r.Subnets {
				for _, c := range s.Checks {
					if c.ID != CheckIPv6 {
						if c.Status == report.StepFail || c.Status == report.StepWarn {
							t.Errorf("%s: %s = %s (%s): only %s may warn", s.Name, c.ID, c.Status, c.Summary, CheckIPv6)
						}
						continue
					}
					want := tt.apps
					if s.ID == snetSys && want == report.StepWarn {
						want = report.StepPass
					}
					if c.Status != want {
						t.Errorf("%s: %s = %s (%s), want %s", s.Name, c.ID, c.Status, c.Summary, want)
					}
					if s.ID == snetApps && !strings.Contains(c.Summary, tt.summary) {
						t.Errorf("%s: summary %q, want it to contain %q", s.Name, c.Summary, tt.summary)
					}
				}
			}
			if tt.resource == "" {
				if len(r.Changes) != 0 {
					t.Errorf("changes = %+v, want none", r.Changes)
				}
				return
			}
			found := false
			for _, ch := range r.Changes {
				found = found || ch.Check == CheckIPv6 && ch.Resource == tt.resource && strings.Contains(ch.Command, tt.command)
			}
			if !found {
				t.Errorf("changes = %+v, want one for %s on %s with %q", r.Changes, CheckIPv6, tt.resource, tt.command)
			}
		})
	}
}
