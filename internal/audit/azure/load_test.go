package azure

import (
	"encoding/json"
	"github.com/pullpath/pullpath/internal/audit"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pullpath/pullpath/internal/report"
)

// fixtureFS is a fixture folder in memory, to alter one file at a time.
func fixtureFS(t testing.TB, dir string) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	entries, err := os.ReadDir(filepath.Join("testdata", dir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("testdata", dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fsys[e.Name()] = &fstest.MapFile{Data: data}
	}
	return fsys
}

func statuses(r *report.AuditReport) map[string]report.StepStatus {
	out := map[string]report.StepStatus{}
	for _, s := range r.Subnets {
		for _, c := range s.Checks {
			out[s.Name+" "+c.ID] = c.Status
		}
	}
	return out
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// armShape writes a model back as raw ARM JSON (what the REST API and the
// SDK speak: properties nested, lists as {"value": [...]}).
func armShape(t testing.TB, m *Model) fstest.MapFS {
	page := func(v any) []byte { return mustJSON(t, map[string]any{"value": v}) }
	fsys := fstest.MapFS{
		FileAKS:              {Data: mustJSON(t, m.Cluster)},
		FileVNet:             {Data: mustJSON(t, m.VNet)},
		FilePeerings:         {Data: page(m.Peerings)},
		FileZones:            {Data: page(m.Zones)},
		FileLinks(ACRZone):   {Data: page(m.Links)},
		FileRecords(ACRZone): {Data: page(m.Records)},
		FileACR:              {Data: mustJSON(t, m.Registry)},
	}
	var ras []any
	for _, ra := range m.Roles {
		ras = append(ras, ra.RoleAssignment)
	}
	fsys[FileRoles] = &fstest.MapFile{Data: page(ras)}
	for _, s := range m.Subnets {
		fsys[FileSubnet(*s.Name)] = &fstest.MapFile{Data: mustJSON(t, s)}
	}
	for _, x := range m.RouteTables {
		fsys[FileRouteTable(*x.Name)] = &fstest.MapFile{Data: mustJSON(t, x)}
	}
	for _, x := range m.NSGs {
		fsys[FileNSG(*x.Name)] = &fstest.MapFile{Data: mustJSON(t, x)}
	}
	for _, x := range m.PrivateEndpoints {
		fsys[FilePE(*x.Name)] = &fstest.MapFile{Data: mustJSON(t, x)}
	}
	for nic, routes := range m.Routes {
		for _, n := range m.NodeNICs() {
			if strings.EqualFold(n.Name, nic) {
				fsys[FileRoutes(n.Name)] = &fstest.MapFile{Data: page(routes)}
			}
		}
	}
	return fsys
}

// Raw ARM JSON where the CLI's shape is expected reads the same, and the
// CLI's shape (the fixtures) reads as the SDK's model.
func TestRawARMAndCLIShapesReadAlike(t *testing.T) {
	for _, dir := range []string{"valid-healthy", "invalid-route-udr-none", "invalid-nsg-deny-443", "invalid-private-endpoint-pending", "invalid-identity-no-acrpull"} {
		t.Run(dir, func(t *testing.T) {
			m, err := Load(fixtureFS(t, dir))
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Cluster.Properties.AgentPoolProfiles[0].VnetSubnetID; got == nil || !strings.HasSuffix(*got, "/subnets/snet-system") {
				t.Fatalf("vnetSubnetId (CLI) did not reach the SDK's VnetSubnetID (ARM vnetSubnetID): %v", got)
			}
			want := statuses(Audit(m, "", audit.Focus{}))
			am, err := Load(armShape(t, m))
			if err != nil {
				t.Fatalf("Load(raw ARM) = %v", err)
			}
			if len(am.Warnings) != 0 {
				t.Errorf("raw ARM warnings: %v", am.Warnings)
			}
			if got := statuses(Audit(am, "", audit.Focus{})); !reflect.DeepEqual(got, want) {
				t.Errorf("raw ARM audit = %v, want %v", got, want)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	vnet := fixtureFS(t, "valid-healthy")[FileVNet].Data
	tests := []struct {
		name    string
		file    string
		data    string // "" removes the file
		wantErr string // a one-line error naming the file; "" when a warning is wanted
		warn    string // a warning naming the file and the command
		check   string // the check that must warn instead of deciding
	}{
		{"aks not JSON", FileAKS, "Error: (ResourceNotFound) The Resource 'Microsoft.ContainerService/managedClusters/x' was not found.", "aks-show.json: not JSON", "", ""},
		{"aks is another command's output", FileAKS, string(vnet), "aks-show.json: holds a Microsoft.Network/virtualNetworks, not a Microsoft.ContainerService/managedClusters: want the output of `az aks show", "", ""},
		{"aks is a list", FileAKS, "[]", "aks-show.json: a JSON array, not an object", "", ""},
		{"aks is null", FileAKS, "null", "aks-show.json: a JSON null, not an object", "", ""},
		{"aks without pools", FileAKS, `{"name": "x", "type": "Microsoft.ContainerService/ManagedClusters"}`, "aks-show.json: no agentPoolProfiles", "", ""},
		{"aks missing", FileAKS, "", "aks-show.json: missing: want the output of `az aks show", "", ""},
		{"acr missing", FileACR, "", "acr-show.json: missing: want the output of `az acr show", "", ""},
		{"two JSON values", FileACR, "{}{}", "acr-show.json: more than one JSON value", "", ""},
		{"nsg missing", FileNSG("nsg-apps"), "", "", "network-nsg-show-nsg-apps.json is missing", "nsg-egress-443"},
		{"nsg holds a vnet", FileNSG("nsg-apps"), string(vnet), "", "holds a Microsoft.Network/virtualNetworks, not a Microsoft.Network/networkSecurityGroups", "nsg-egress-443"},
		{"links not a list", FileLinks(ACRZone), string(vnet), "", "holds one Microsoft.Network/virtualNetworks, not a list", "dns-zone-link"},
		{"records truncated", FileRecords(ACRZone), `[{"aRecords": [{"ipv4Address": "10.50.1.4"}], "name": "contosoacr"`, "", "not JSON", "dns-records"},
		{"roles missing", FileRoles, "", "", "az role assignment list --scope /subscriptions/", "identity-acrpull"},
		{"routes of the wrong command", FileRoutes("aks-apps-12345678-vmss"), `{"value": [{"name": "x"}]}`, "", "item 0 has no nextHopType", ""},
		{"peerings missing", FilePeerings, "", "", "the peerings were read from network-vnet-show.json", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fixtureFS(t, "valid-healthy")
			if tt.data == "" {
				delete(fsys, tt.file)
			} else {
				fsys[tt.file] = &fstest.MapFile{Data: []byte(tt.data)}
			}
			m, err := Load(fsys)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("Load = %v, want one line with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load = %v, want a warning", err)
			}
			var found bool
			for _, w := range m.Warnings {
				if strings.Contains(w.Message+" "+w.Command, tt.warn) && w.File == tt.file && w.Command != "" {
					found = true
				}
			}
			if !found {
				t.Fatalf("warnings = %+v, want one for %s with %q and the command", m.Warnings, tt.file, tt.warn)
			}
			r := Audit(m, "", audit.Focus{})
			// network-vnet-show.json holds the peerings too: that audit may pass
			if r.Verdict.Status == report.StepPass && tt.file != FilePeerings {
				t.Errorf("verdict pass with %s unusable: a missing input must not pass silently", tt.file)
			}
			if tt.check != "" {
				for _, s := range r.Subnets {
					for _, c := range s.Checks {
						if c.ID == tt.check && c.Status != report.StepWarn && !(tt.check == "nsg-egress-443" && s.Name == "snet-system") {
							t.Errorf("%s %s = %s (%s), want warn", s.Name, c.ID, c.Status, c.Summary)
						}
					}
				}
			}
		})
	}
}

// With no effective routes captured, the routes are computed from the
// route table, the VNet and its peerings, and say so; a route table that
// stops BGP propagation is still found.
func TestComputedRoutes(t *testing.T) {
	fsys := fixtureFS(t, "invalid-route-disable-bgp")
	delete(fsys, FileRoutes("aks-apps-12345678-vmss"))
	delete(fsys, FileRoutes("aks-system-12345678-vmss"))
	m, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	r := Audit(m, "", audit.Focus{})
	st := statuses(r)
	if st["snet-apps route"] != report.StepFail || st["snet-system route"] != report.StepWarn {
		t.Fatalf("route = apps %s, system %s; want fail (BGP stopped) and warn (a BGP route may carry it)", st["snet-apps route"], st["snet-system route"])
	}
}
