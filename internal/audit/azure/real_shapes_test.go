package azure

import (
	"encoding/json"
	"github.com/pullpath/pullpath/internal/audit"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/pullpath/pullpath/internal/report"
)

// Shapes the real Azure CLI prints that the generated fixtures do not: each
// edits one file of the healthy folder into that shape, and the audit must
// read the same account (still pass, no warning), since the account is
// unchanged. These are shapes of the real CLI (AAZ-based `az network`
// commands leave absent members out where SDK-based ones print null;
// multi-prefix subnets print addressPrefixes only; a private endpoint with a
// private DNS zone group and dynamic addresses prints customDnsConfigs empty)
// written onto the healthy account, not verbatim documentation excerpts: the
// Azure CLI's reference pages print no full outputs of these commands.
func TestRealCLIShapesReadAlike(t *testing.T) {
	type obj = map[string]any
	each := func(v any, f func(obj)) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				if o, ok := e.(obj); ok {
					f(o)
				}
			}
		case obj:
			f(x)
		}
	}
	tests := []struct {
		name, file string
		edit       func(t *testing.T, v any) any
	}{
		{"subnet with addressPrefixes only (multi-prefix subnets)", "network-vnet-subnet-show-snet-apps.json", func(t *testing.T, v any) any {
			o := v.(obj)
			o["addressPrefixes"] = []any{o["addressPrefix"]}
			delete(o, "addressPrefix")
			return o
		}},
		{"subnet with addressPrefix null and addressPrefixes", "network-vnet-subnet-show-snet-system.json", func(t *testing.T, v any) any {
			o := v.(obj)
			o["addressPrefixes"] = []any{o["addressPrefix"]}
			o["addressPrefix"] = nil
			return o
		}},
		{"effective routes without disableBgpRoutePropagation", "network-nic-show-effective-route-table-aks-apps-12345678-vmss.json", func(t *testing.T, v any) any {
			each(v.(obj)["value"], func(r obj) { delete(r, "disableBgpRoutePropagation") })
			return v
		}},
		{"effective routes without nextLink, names set", "network-nic-show-effective-route-table-aks-system-12345678-vmss.json", func(t *testing.T, v any) any {
			delete(v.(obj), "nextLink")
			each(v.(obj)["value"], func(r obj) { r["name"] = "route" })
			return v
		}},
		{"nsg: destinationPortRanges list, destinationPortRange null", "network-nsg-show-nsg-apps.json", func(t *testing.T, v any) any {
			for _, k := range []string{"securityRules", "defaultSecurityRules"} {
				each(v.(obj)[k], func(r obj) {
					if p, ok := r["destinationPortRange"].(string); ok && p != "*" {
						r["destinationPortRanges"] = []any{p}
						r["destinationPortRange"] = nil
					}
				})
			}
			return v
		}},
		{"nsg: AAZ output leaves absent members out", "network-nsg-show-nsg-system.json", func(t *testing.T, v any) any {
			for _, k := range []string{"securityRules", "defaultSecurityRules"} {
				each(v.(obj)[k], func(r obj) {
					for k2, x := range r {
						if x == nil {
							delete(r, k2)
						}
						if l, ok := x.([]any); ok && len(l) == 0 {
							delete(r, k2)
						}
					}
				})
			}
			return v
		}},
		{"vnet with dhcpOptions.dnsServers empty", "network-vnet-show.json", func(t *testing.T, v any) any {
			v.(obj)["dhcpOptions"] = obj{"dnsServers": []any{}}
			return v
		}},
		{"vnet with dhcpOptions null", "network-vnet-show.json", func(t *testing.T, v any) any {
			v.(obj)["dhcpOptions"] = nil
			return v
		}},
		{"role assignments: condition and principalName absent (older CLI)", "role-assignment-list.json", func(t *testing.T, v any) any {
			each(v, func(r obj) {
				if r["condition"] == nil {
					delete(r, "condition")
					delete(r, "conditionVersion")
				}
				delete(r, "principalName")
			})
			return v
		}},
		{"dns records: fqdn without the trailing dot", "network-private-dns-record-set-a-list-privatelink.azurecr.io.json", func(t *testing.T, v any) any {
			each(v, func(r obj) {
				if s, ok := r["fqdn"].(string); ok {
					r["fqdn"] = strings.TrimSuffix(s, ".")
				}
			})
			return v
		}},
		{"private endpoint: customDnsConfigs null", "network-private-endpoint-show-pe-contosoacr.json", func(t *testing.T, v any) any {
			v.(obj)["customDnsConfigs"] = nil
			return v
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fixtureFS(t, "valid-healthy")
			f, ok := fsys[tc.file]
			if !ok {
				t.Fatalf("no %s in valid-healthy", tc.file)
			}
			var v any
			if err := json.Unmarshal(f.Data, &v); err != nil {
				t.Fatal(err)
			}
			out, err := json.MarshalIndent(tc.edit(t, v), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			fsys[tc.file] = &fstest.MapFile{Data: out}
			m, err := Load(fsys)
			if err != nil {
				t.Fatalf("Load = %v", err)
			}
			r := Audit(m, "valid-healthy", audit.Focus{})
			if r.Verdict.Status != report.StepPass || len(r.Warnings) != 0 {
				for _, s := range r.Subnets {
					for _, c := range s.Checks {
						if c.Status != report.StepPass && c.Status != report.StepSkip {
							t.Errorf("%s %s = %s: %s", s.ID, c.ID, c.Status, c.Summary)
						}
					}
				}
				t.Fatalf("verdict %s (%s), warnings %v: want the healthy account's pass", r.Verdict.Status, r.Verdict.Summary, r.Warnings)
			}
		})
	}
}
