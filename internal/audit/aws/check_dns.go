package aws

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// usesPrivateDNS lists the interface endpoints (of the pull's services)
// with private DNS on: what the VPC's DNS settings must let work.
func (m *Model) privateDNSEndpoints() []string {
	var out []string
	for _, svc := range []string{SvcECRAPI, SvcECRDKR, SvcS3} {
		for _, e := range m.endpointsFor(svc, "Interface") {
			if e.PrivateDnsEnabled != nil && *e.PrivateDnsEnabled {
				out = append(out, str(e.VpcEndpointId))
			}
		}
	}
	return out
}

// checkDNSAttributes: the Amazon resolver answers only with enableDnsSupport;
// interface endpoints' private DNS names need enableDnsHostnames too.
func checkDNSAttributes(m *Model, ns *NodeSubnet) report.CheckResult {
	if !m.Have[FileDNSSupport] && !m.Have[FileDNSHostnames] {
		return m.missing(FileDNSSupport)
	}
	ev := []string{fmt.Sprintf("enableDnsSupport=%s enableDnsHostnames=%s", boolString(m.DNSSupport), boolString(m.DNSHosts))}
	if m.DNSSupport != nil && !*m.DNSSupport {
		c := audit.Fail(verdict.ConditionDNS, fmt.Sprintf("%s has enableDnsSupport off: the Amazon DNS server does not answer the nodes, and no endpoint's private name resolves", m.VPC), ev...)
		return audit.WithChange(c, report.Change{Resource: m.VPC, Kind: "vpc", Action: "turn on DNS support",
			Command: fmt.Sprintf(`aws ec2 modify-vpc-attribute --vpc-id %s --enable-dns-support "{\"Value\":true}"%s`, m.VPC, m.regionFlag())})
	}
	eps := m.privateDNSEndpoints()
	if m.DNSHosts != nil && !*m.DNSHosts && len(eps) > 0 {
		summary := fmt.Sprintf("%s has enableDnsHostnames off: the private DNS names of %s do not resolve, the registry resolves to public addresses", m.VPC, strings.Join(eps, ", "))
		c := audit.Fail(verdict.ConditionDNS, summary, ev...)
		if ok, via := m.internetOK(ns); ok {
			c = audit.Warn(verdict.ConditionDNS, summary+" and goes out through "+via+" instead of the endpoints", ev...)
		}
		return audit.WithChange(c, report.Change{Resource: m.VPC, Kind: "vpc", Action: "turn on DNS host names (private DNS needs both attributes)",
			Command: fmt.Sprintf(`aws ec2 modify-vpc-attribute --vpc-id %s --enable-dns-hostnames "{\"Value\":true}"%s`, m.VPC, m.regionFlag())})
	}
	if m.DNSSupport == nil || m.DNSHosts == nil && len(eps) > 0 {
		file := FileDNSSupport
		if m.DNSSupport != nil {
			file = FileDNSHostnames
		}
		return m.missing(file)
	}
	return audit.Pass(fmt.Sprintf("%s: DNS support on, DNS host names %s", m.VPC, onOff(m.DNSHosts)), ev...)
}

func boolString(b *bool) string {
	if b == nil {
		return "unknown"
	}
	return fmt.Sprint(*b)
}

func onOff(b *bool) string {
	if b == nil {
		return "unknown"
	}
	if *b {
		return "on"
	}
	return "off"
}

// checkDHCPOptions: custom name servers must forward to the VPC resolver,
// or the endpoints' private names vanish; public resolvers never can.
func checkDHCPOptions(m *Model, ns *NodeSubnet) report.CheckResult {
	if !m.Have[FileDHCPOptions] {
		return m.missing(FileDHCPOptions)
	}
	if m.DHCP == nil {
		if strings.Contains(m.DHCPNote, "AmazonProvidedDNS") {
			return audit.Pass(m.DHCPNote)
		}
		return audit.Warn(verdict.ConditionDNS, "cannot tell the VPC's DHCP option set: "+m.DHCPNote, m.command(FileVPCs))
	}
	id := str(m.DHCP.DhcpOptionsId)
	servers := dnsServers(m.DHCP)
	ev := []string{id + " domain-name-servers=" + strings.Join(servers, ",")}
	if len(servers) == 0 {
		return audit.WithResources(audit.Pass(id+" sets no name servers: the nodes use AmazonProvidedDNS", ev...), id)
	}
	resolvers := m.vpcResolvers()
	var custom []string
	for _, s := range servers {
		if strings.EqualFold(s, "AmazonProvidedDNS") {
			return audit.WithResources(audit.Pass(id+" uses AmazonProvidedDNS", ev...), id)
		}
		if a, err := netip.ParseAddr(s); err == nil {
			for _, r := range resolvers {
				if a == r {
					return audit.WithResources(audit.Pass(fmt.Sprintf("%s names the VPC resolver %s", id, s), ev...), id)
				}
			}
		}
		custom = append(custom, s)
	}
	change := report.Change{Resource: id, Kind: "dhcp-options", Action: "make the name servers forward amazonaws.com to the VPC resolver (VPC CIDR base +2), or use AmazonProvidedDNS",
		Command: fmt.Sprintf("aws ec2 create-dhcp-options --dhcp-configurations Key=domain-name-servers,Values=AmazonProvidedDNS%s && aws ec2 associate-dhcp-options --vpc-id %s --dhcp-options-id NEW_ID", m.regionFlag(), m.VPC)}
	if _, public := m.dhcpPublicOnly(); public {
		summary := fmt.Sprintf("%s gives only public name servers (%s): they cannot see the VPC's private zones, so the endpoints' private names resolve public", id, strings.Join(custom, ", "))
		relies := false
		for _, svc := range []string{SvcECRAPI, SvcECRDKR, SvcS3} {
			if e := pickInterface(m.endpointsFor(svc, "Interface")); e != nil && e.PrivateDnsEnabled != nil && *e.PrivateDnsEnabled {
				relies = true
			}
		}
		ok, via := m.internetOK(ns)
		if relies && !ok {
			return audit.WithChange(audit.WithResources(audit.Fail(verdict.ConditionDNS, summary+" and the subnet has no internet path", ev...), id), change)
		}
		if relies {
			summary += "; the pull goes out through " + via + " instead"
		}
		return audit.WithChange(audit.WithResources(audit.Warn(verdict.ConditionDNS, summary, ev...), id), change)
	}
	return audit.WithChange(audit.WithResources(audit.Warn(verdict.ConditionDNS, fmt.Sprintf("%s uses custom name servers %s: they must forward amazonaws.com to the VPC resolver, or the endpoints' private names vanish (not visible from the configuration)", id, strings.Join(custom, ", ")), ev...), id), change)
}

// checkPrivateDNS: an ECR interface endpoint with private DNS off leaves
// the registry names on their public addresses.
func checkPrivateDNS(m *Model, ns *NodeSubnet) report.CheckResult {
	if !m.Have[FileEndpoints] {
		return m.missing(FileEndpoints)
	}
	var on, off []string
	var c report.CheckResult
	for _, svc := range []string{SvcECRAPI, SvcECRDKR} {
		e := pickInterface(m.endpointsFor(svc, "Interface"))
		if e == nil {
			continue
		}
		id := str(e.VpcEndpointId)
		if e.PrivateDnsEnabled != nil && *e.PrivateDnsEnabled {
			on = append(on, id+" ("+svc+")")
			continue
		}
		off = append(off, id+" ("+svc+")")
		c = audit.WithChange(c, report.Change{Resource: id, Kind: "vpc-endpoint", Action: "turn on private DNS so " + m.Host(svc) + " resolves to the endpoint",
			Command: fmt.Sprintf("aws ec2 modify-vpc-endpoint --vpc-endpoint-id %s --private-dns-enabled%s", id, m.regionFlag())})
	}
	if len(on)+len(off) == 0 {
		return audit.Skip("no ECR interface endpoints: the registry names resolve public by design")
	}
	if len(off) == 0 {
		return audit.WithResources(audit.Pass("private DNS on: "+strings.Join(on, ", ")), c.Resources...)
	}
	summary := "private DNS off on " + strings.Join(off, ", ") + ": the node resolves the registry to a public address and tries the internet"
	if ok, via := m.internetOK(ns); ok {
		r := audit.Warn(verdict.ConditionDNS, summary+" (it works through "+via+", bypassing the endpoint)")
		r.Resources, r.Changes = c.Resources, c.Changes
		return r
	}
	r := audit.Fail(verdict.ConditionDNS, summary+", and the subnet has no internet path")
	r.Resources, r.Changes = c.Resources, c.Changes
	return r
}
