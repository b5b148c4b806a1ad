package azure

import "strings"

// Given says whether a contract file was read (audit.Given): a check that
// states it needs a file not given never fails on its absence. A list the
// VNet's own file also holds (the peerings) counts as given when read
// from there.
func (m *Model) Given(file string) bool {
	switch file {
	case FileVNet:
		return m.VNet != nil
	case FilePeerings:
		return m.PeeringsKnown
	case FileZones:
		return m.ZonesKnown
	case FileLinks(ACRZone):
		return m.LinksKnown
	case FileRecords(ACRZone):
		return m.RecordsKnown
	case FileRoles:
		return m.RolesKnown
	}
	if ok, read := m.given[file]; read {
		return ok
	}
	return true // a file the loader never looked for is not this audit's
}

// Collect is the command that writes a file.
func (m *Model) Collect(file string) string { return m.cmds[file] }

// The files each check needs (docs/azure.md's table).
func needsNone(*Model, *nodeSubnet) []string { return nil }

func needsFiles(files ...string) func(*Model, *nodeSubnet) []string {
	return func(*Model, *nodeSubnet) []string { return files }
}

// needsRoutes: the node NIC's effective routes when read; else what the
// routes are computed from (the VNet, its peerings, the subnet's route
// table).
func needsRoutes(m *Model, ns *nodeSubnet) []string {
	if ns.Routes != nil && !ns.Routes.Computed {
		return nil
	}
	out := []string{FileVNet, FilePeerings}
	if ns.Subnet != nil && ns.Subnet.Properties != nil && ns.Subnet.Properties.RouteTable != nil && ns.Subnet.Properties.RouteTable.ID != nil {
		out = append(out, FileRouteTable(lastName(*ns.Subnet.Properties.RouteTable.ID)))
	}
	return out
}

// needsNSG: the subnet's NSG, when it has one.
func needsNSG(m *Model, ns *nodeSubnet) []string {
	if ns.Subnet != nil && ns.Subnet.Properties != nil && ns.Subnet.Properties.NetworkSecurityGroup != nil && ns.Subnet.Properties.NetworkSecurityGroup.ID != nil {
		return []string{FileNSG(lastName(*ns.Subnet.Properties.NetworkSecurityGroup.ID))}
	}
	return nil
}

// needsEndpoints: the registry's private endpoints (their addresses).
func needsEndpoints(m *Model, _ *nodeSubnet) []string {
	var out []string
	if m.Registry == nil || m.Registry.Properties == nil {
		return nil
	}
	for _, c := range m.Registry.Properties.PrivateEndpointConnections {
		if c != nil && c.Properties != nil && c.Properties.PrivateEndpoint != nil && c.Properties.PrivateEndpoint.ID != nil {
			out = append(out, FilePE(lastName(*c.Properties.PrivateEndpoint.ID)))
		}
	}
	return out
}

func needsAll(fs ...func(*Model, *nodeSubnet) []string) func(*Model, *nodeSubnet) []string {
	return func(m *Model, ns *nodeSubnet) []string {
		var out []string
		for _, f := range fs {
			for _, x := range f(m, ns) {
				if !containsFold(out, x) {
					out = append(out, x)
				}
			}
		}
		return out
	}
}

func containsFold(list []string, v string) bool {
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}
