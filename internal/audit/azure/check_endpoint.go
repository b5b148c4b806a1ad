package azure

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// checkPrivateEndpoint checks the registry's private endpoint connections
// (Approved; a Pending manual request names both the endpoint and the
// registry) and that they cover every host of the pull: a data endpoint
// of a geo-replica added later has no address of its own.
func checkPrivateEndpoint(m *Model, n *nodeSubnet) report.CheckResult {
	cond := verdict.ConditionRoute
	var ev, res []string // what the check read, the endpoints it names
	reg := m.Registry
	regID := str(reg.ID)
	conns := reg.Properties.PrivateEndpointConnections
	if len(conns) == 0 {
		return audit.Skip(fmt.Sprintf("registry %s has no private endpoint connection: the nodes use its public endpoint", m.RegistryName()))
	}
	var bad *finding
	approved := 0
	for _, pc := range conns {
		if pc == nil || pc.Properties == nil {
			continue
		}
		peID := ""
		if pc.Properties.PrivateEndpoint != nil {
			peID = str(pc.Properties.PrivateEndpoint.ID)
		}
		st := ""
		if s := pc.Properties.PrivateLinkServiceConnectionState; s != nil && s.Status != nil {
			st = string(*s.Status)
		}
		connID := cmp.Or(str(pc.ID), regID+"/privateEndpointConnections/"+str(pc.Name))
		res = appendUnique(res, peID)
		ev = append(ev, fmt.Sprintf("connection %s: private endpoint %s, %s", str(pc.Name), lastName(peID), cmp.Or(st, "unknown")))
		if strings.EqualFold(st, "Approved") {
			approved++
			if _, ok := m.PrivateEndpoints[idKey(peID)]; !ok && peID != "" {
				ev = append(ev, fmt.Sprintf("private endpoint %s is not described: %s is missing, so its addresses are unknown", lastName(peID), FilePE(lastName(peID))))
			}
			continue
		}
		connName := cmp.Or(str(pc.Name), lastName(connID))
		var f *finding
		switch strings.ToLower(st) {
		case "pending":
			f = &finding{summary: fmt.Sprintf("private endpoint %s's connection to registry %s is Pending: a manual request nobody approved, so no traffic flows", lastName(peID), m.RegistryName()),
				changes: []report.Change{{Resource: connID, Kind: "Microsoft.ContainerRegistry/registries/privateEndpointConnections",
					Action:  fmt.Sprintf("approve the connection of private endpoint %s on registry %s", peID, regID),
					Command: fmt.Sprintf("az acr private-endpoint-connection approve -r %s -n %s", m.RegistryName(), connName)}}}
		default:
			f = &finding{summary: fmt.Sprintf("private endpoint %s's connection to registry %s is %s: no traffic flows through it", lastName(peID), m.RegistryName(), cmp.Or(st, "unknown")),
				changes: []report.Change{{Resource: peID, Kind: "Microsoft.Network/privateEndpoints",
					Action:  fmt.Sprintf("re-create private endpoint %s (a %s connection cannot be approved again)", lastName(peID), cmp.Or(st, "unknown")),
					Command: fmt.Sprintf("az network private-endpoint create -g %s -n %s --subnet SUBNET_ID --private-connection-resource-id %s --group-id registry --connection-name %s", resourceGroupOf(peID), lastName(peID), regID, connName)}}}
		}
		f.resources = []string{connID, peID, regID}
		f.host = m.LoginServer()
		bad = first(bad, f)
	}
	if bad == nil && approved > 0 {
		// coverage: every host needs an address on a private endpoint
		for _, h := range n.Hosts {
			if h.private() || h.Name == BlobWildcard {
				continue
			}
			if len(m.PrivateEndpoints) == 0 {
				break // no endpoint described: the addresses are unknown, not missing
			}
			if !m.peAddressesShown() {
				// A private endpoint with a private DNS zone group and
				// dynamic addresses prints customDnsConfigs empty and no
				// ipConfigurations: its addresses are on its NIC only, so
				// they are unknown here, not missing.
				ev = append(ev, "the private endpoints list no customDnsConfigs or static ipConfigurations: their addresses are unknown (az network nic show on their NICs has them)")
				break
			}
			peID := ""
			for _, pc := range conns {
				if pc != nil && pc.Properties != nil && pc.Properties.PrivateEndpoint != nil {
					peID = str(pc.Properties.PrivateEndpoint.ID)
					break
				}
			}
			pna := "Enabled"
			if reg.Properties.PublicNetworkAccess != nil {
				pna = string(*reg.Properties.PublicNetworkAccess)
			}
			if !strings.EqualFold(pna, "Disabled") {
				ev = append(ev, fmt.Sprintf("%s has no private endpoint address: the nodes reach it over the public endpoint (publicNetworkAccess %s)", h.Name, pna))
				c := audit.Warn(cond, fmt.Sprintf("no private endpoint of registry %s has an address for %s: the nodes pull its layers over the public endpoint, around the private path", m.RegistryName(), h.Name), ev...)
				return audit.WithResources(audit.WithHost(c, h.Name), res...)
			}
			bad = &finding{host: h.Name,
				summary:   fmt.Sprintf("no private endpoint of registry %s has an address for %s (a geo-replica or data endpoint added after the endpoint?), and publicNetworkAccess is Disabled: the nodes cannot fetch its layers", m.RegistryName(), h.Name),
				resources: []string{peID, regID},
				changes: []report.Change{{Resource: peID, Kind: "Microsoft.Network/privateEndpoints",
					Action:  fmt.Sprintf("refresh the private endpoint so its customDnsConfigs include %s (re-approve or re-create it after adding the replica), then add its A record", h.Name),
					Command: fmt.Sprintf("az network private-endpoint show -g %s -n %s --query customDnsConfigs", resourceGroupOf(peID), lastName(peID))}},
			}
			cond = verdict.ConditionDNS
			break
		}
	}
	switch {
	case bad != nil:
		// the finding's objects first, then every endpoint read (an
		// endpoint may be both)
		return audit.WithResources(bad.fail(cond, ev), res...)
	case approved == 0:
		return audit.WithResources(audit.Warn(cond, "no private endpoint connection has a state", ev...), res...)
	}
	return audit.WithResources(audit.Pass(fmt.Sprintf("%d private endpoint connection(s) of %s Approved, covering every host of the pull", approved, m.RegistryName()), ev...), res...)
}

// checkPublicAccess checks the registry's public side for the hosts the
// nodes reach publicly: publicNetworkAccess and the network rule set.
func checkPublicAccess(m *Model, n *nodeSubnet) report.CheckResult {
	const cond = verdict.ConditionRoute
	reg := m.Registry
	regID := str(reg.ID)
	var public []string
	for _, h := range n.Hosts {
		if !h.private() {
			public = append(public, h.Name)
		}
	}
	pna := "Enabled"
	if reg.Properties.PublicNetworkAccess != nil {
		pna = string(*reg.Properties.PublicNetworkAccess)
	}
	if len(reg.Properties.PrivateEndpointConnections) > 0 && len(public) > 0 {
		return audit.WithResources(audit.Skip(fmt.Sprintf("the registry uses private endpoints: the private-endpoint check covers %s", strings.Join(public, ", "))), regID)
	}
	if len(public) == 0 {
		return audit.WithResources(audit.Pass(fmt.Sprintf("every host has a private endpoint; publicNetworkAccess %s does not matter to the nodes", pna)), regID)
	}
	hosts := strings.Join(public, ", ")
	if strings.EqualFold(pna, "Disabled") {
		c := audit.WithHost(audit.Fail(cond, fmt.Sprintf("registry %s has publicNetworkAccess Disabled, and %s has no private endpoint address: the nodes' public requests are refused", m.RegistryName(), hosts)), public[0])
		return audit.WithChange(c, report.Change{Resource: regID, Kind: "Microsoft.ContainerRegistry/registries",
			Action:  fmt.Sprintf("reach %s through a private endpoint (with its A records), or allow public network access", hosts),
			Command: fmt.Sprintf("az acr update -n %s --public-network-enabled true", m.RegistryName())})
	}
	if rs := reg.Properties.NetworkRuleSet; rs != nil && rs.DefaultAction != nil && strings.EqualFold(string(*rs.DefaultAction), "Deny") {
		var rules []string
		for _, r := range rs.IPRules {
			if r != nil {
				rules = append(rules, str(r.IPAddressOrRange))
			}
		}
		c := audit.WithHost(audit.Warn(cond, fmt.Sprintf("registry %s's network rule set denies by default: the nodes' egress address must be among its IP rules (%s); the egress address is outside the contract", m.RegistryName(), cmp.Or(strings.Join(rules, ", "), "unknown"))), public[0])
		return audit.WithChange(c, report.Change{Resource: regID, Kind: "Microsoft.ContainerRegistry/registries",
			Action:  "allow the cluster's outbound address (its load balancer or NAT gateway public IP) in the registry's network rules",
			Command: fmt.Sprintf("az acr network-rule add -n %s --ip-address EGRESS_IP", m.RegistryName())})
	}
	return audit.WithResources(audit.Pass(fmt.Sprintf("registry %s accepts public traffic for %s (publicNetworkAccess %s)", m.RegistryName(), hosts, pna)), regID)
}
