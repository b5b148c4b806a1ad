package azure

import (
	"net/netip"
	"sort"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v8"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// BlobWildcard stands for the registry's storage when dedicated data
// endpoints are off and no private endpoint serves the layers: the
// registry redirects blob GETs to a *.blob.core.windows.net account.
const BlobWildcard = "*.blob.core.windows.net"

// pullHost is one host of an ACR pull and what the registry side offers
// for it.
type pullHost struct {
	Name string
	Role verdict.Role
	// Record is the A record's name in privatelink.azurecr.io
	// (REGISTRY, REGISTRY.REGION.data).
	Record string
	// PE holds the private endpoint addresses for the host
	// (customDnsConfigs), by endpoint id.
	PE map[string][]netip.Addr
	// PEIDs in a stable order.
	PEIDs []string
}

func (h *pullHost) private() bool { return len(h.PE) > 0 }

// peAddrs is every private endpoint address for the host.
func (h *pullHost) peAddrs() []netip.Addr {
	var out []netip.Addr
	for _, id := range h.PEIDs {
		out = append(out, h.PE[id]...)
	}
	return out
}

// recordName is a host's relative name in privatelink.azurecr.io:
// myacr.azurecr.io -> myacr, myacr.eastus.data.azurecr.io -> myacr.eastus.data.
func recordName(host string) string {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	h = strings.TrimSuffix(h, ".privatelink.azurecr.io")
	return strings.TrimSuffix(h, ".azurecr.io")
}

// hosts are the hosts of a pull from the registry: the login server, every
// data endpoint (one per region and geo-replica, from dataEndpointHostNames
// and from the private endpoints' customDnsConfigs), and the storage
// wildcard when there is neither a data endpoint nor a private endpoint.
func (m *Model) hosts() []*pullHost {
	login := m.LoginServer()
	byName := map[string]*pullHost{}
	var order []string
	add := func(name string, role verdict.Role) *pullHost {
		name = strings.ToLower(strings.TrimSuffix(name, "."))
		if h, ok := byName[name]; ok {
			return h
		}
		h := &pullHost{Name: name, Role: role, Record: recordName(name), PE: map[string][]netip.Addr{}}
		byName[name] = h
		order = append(order, name)
		return h
	}
	add(login, verdict.RoleRegistry)
	if p := m.Registry.Properties; p != nil {
		for _, d := range p.DataEndpointHostNames {
			if d != nil && *d != "" {
				add(*d, verdict.RoleBlob)
			}
		}
	}
	regPrefix := strings.TrimSuffix(login, ".azurecr.io") + "."
	for _, id := range sortedKeys(m.PrivateEndpoints) {
		pe := m.PrivateEndpoints[id]
		if pe.Properties == nil {
			continue
		}
		peID := str(pe.ID)
		for _, c := range peCustomDNS(pe, login) {
			fq := strings.ToLower(strings.TrimSuffix(str(c.Fqdn), "."))
			if fq != login && !(strings.HasPrefix(fq, regPrefix) && strings.HasSuffix(fq, ".data.azurecr.io")) {
				continue
			}
			role := verdict.RoleBlob
			if fq == login {
				role = verdict.RoleRegistry
			}
			h := add(fq, role)
			for _, a := range c.IPAddresses {
				if ip, err := netip.ParseAddr(str(a)); err == nil {
					if _, seen := h.PE[peID]; !seen {
						h.PEIDs = append(h.PEIDs, peID)
					}
					h.PE[peID] = appendAddr(h.PE[peID], ip)
				}
			}
		}
	}
	var out []*pullHost
	for _, n := range order {
		out = append(out, byName[n])
	}
	if len(out) == 1 && !out[0].private() && (m.Registry.Properties == nil || !boolv(m.Registry.Properties.DataEndpointEnabled)) {
		out = append(out, &pullHost{Name: BlobWildcard, Role: verdict.RoleBlob, PE: map[string][]netip.Addr{}})
	}
	return out
}

// peAddressesShown says whether any described private endpoint prints an
// address (customDnsConfigs or static ipConfigurations).
func (m *Model) peAddressesShown() bool {
	for _, pe := range m.PrivateEndpoints {
		for _, c := range peCustomDNS(pe, m.LoginServer()) {
			if c != nil && len(c.IPAddresses) > 0 {
				return true
			}
		}
	}
	return false
}

// peCustomDNS is a private endpoint's customDnsConfigs, or, when it has
// none, its static IP configurations read by ACR's member names
// ("registry" is the login server, "registry_data_REGION" the data
// endpoint of REGION).
func peCustomDNS(pe *armnetwork.PrivateEndpoint, login string) []*armnetwork.CustomDNSConfigPropertiesFormat {
	if pe.Properties == nil {
		return nil
	}
	if out := pe.Properties.CustomDNSConfigs; len(out) > 0 {
		return out
	}
	var out []*armnetwork.CustomDNSConfigPropertiesFormat
	reg := strings.TrimSuffix(login, ".azurecr.io")
	for _, ipc := range pe.Properties.IPConfigurations {
		if ipc == nil || ipc.Properties == nil || ipc.Properties.PrivateIPAddress == nil {
			continue
		}
		member := strings.ToLower(str(ipc.Properties.MemberName))
		var fq string
		switch {
		case member == "registry":
			fq = login
		case strings.HasPrefix(member, "registry_data_"):
			fq = reg + "." + strings.TrimPrefix(member, "registry_data_") + ".data.azurecr.io"
		default:
			continue
		}
		out = append(out, &armnetwork.CustomDNSConfigPropertiesFormat{Fqdn: &fq, IPAddresses: []*string{ipc.Properties.PrivateIPAddress}})
	}
	return out
}

func appendAddr(list []netip.Addr, a netip.Addr) []netip.Addr {
	for _, x := range list {
		if x == a {
			return list
		}
	}
	return append(list, a)
}

// AuditHosts are the hosts for the report, with how the nodes reach them.
func (m *Model) auditHosts(hs []*pullHost) []report.AuditHost {
	var out []report.AuditHost
	for _, h := range hs {
		ah := report.AuditHost{Host: h.Name, Role: h.Role}
		if h.private() {
			var names []string
			for _, id := range h.PEIDs {
				names = append(names, "private endpoint "+lastName(id)+" ("+addrsString(h.PE[id])+")")
			}
			ah.Via = strings.Join(names, ", ")
		} else {
			ah.Via = "public endpoint"
		}
		out = append(out, ah)
	}
	return out
}

func addrsString(as []netip.Addr) string {
	ss := make([]string, len(as))
	for i, a := range as {
		ss[i] = a.String()
	}
	sort.Strings(ss)
	return strings.Join(ss, ", ")
}
