package gcp

import (
	"fmt"
	"net/netip"
	"strings"

	dns "google.golang.org/api/dns/v1"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// checkDNSPolicy: a server policy with alternative name servers bound to the
// network makes them, not Cloud DNS's zones, the nodes' answer.
func checkDNSPolicy(m *Model, ns *nodeSubnet) report.CheckResult {
	if !m.PolicyKnown {
		return audit.MissingResult(FileDNSPolicies, "", cmdDNSPolicies(m.NetworkProject()))
	}
	for _, p := range m.Policies {
		if p == nil || p.AlternativeNameServerConfig == nil || len(p.AlternativeNameServerConfig.TargetNameServers) == 0 {
			continue
		}
		bound := false
		for _, n := range p.Networks {
			bound = bound || n != nil && sameRes(n.NetworkUrl, m.NetworkPath())
		}
		if !bound {
			continue
		}
		var targets []string
		for _, t := range p.AlternativeNameServerConfig.TargetNameServers {
			if t != nil {
				targets = append(targets, t.Ipv4Address)
			}
		}
		c := audit.Warn("", fmt.Sprintf("server policy %s sends the network's queries to alternative name servers %s: what they answer for %s is outside this configuration", p.Name, strings.Join(targets, ", "), hostNames(ns.Hosts)),
			"with alternative name servers the private zones below are not what the nodes see unless those servers forward to Cloud DNS")
		c.Resources = []string{p.Name}
		return c
	}
	return audit.Pass(fmt.Sprintf("no server policy with alternative name servers on network %s: the nodes ask Cloud DNS (169.254.169.254)", m.NetworkName()))
}

func hostNames(hs []*pullHost) string {
	var s []string
	for _, h := range hs {
		s = append(s, h.Name)
	}
	return strings.Join(s, ", ")
}

// checkDNSZone: where a private zone bound to the network holds a pull
// host's name, it must answer it with an address of the private or
// restricted VIP (a missing record or wildcard is NXDOMAIN; another
// public address is not Private Google Access).
func checkDNSZone(m *Model, ns *nodeSubnet) report.CheckResult {
	if !m.ZonesKnown {
		return audit.MissingResult(FileZones, "", cmdZones(m.NetworkProject()))
	}
	var okParts []string
	var warned *report.CheckResult
	for _, h := range ns.Hosts {
		a := h.Answer
		switch {
		case a.Undecided != "":
			if warned == nil {
				c := audit.Warn("", fmt.Sprintf("%s: %s", h.Name, a.Undecided), a.Path...)
				c.Host = h.Name
				warned = &c
			}
		case a.NXDomain:
			z := a.Zone
			c := audit.Fail(verdict.ConditionDNS, fmt.Sprintf("%s: NXDOMAIN from zone %s (%s) bound to network %s: %s", h.Name, z.Name, z.DnsName, m.NetworkName(), strings.Join(a.Path, "; ")), a.Path...)
			return audit.WithChange(audit.WithResources(audit.WithHost(c, h.Name), z.Name), recordChange(m, z.Name, fqdn(z.DnsName), m.Records[z.Name]))
		case a.Public:
			okParts = append(okParts, fmt.Sprintf("%s: no private zone bound to %s holds it (Google's public addresses)", h.Name, m.NetworkName()))
		default:
			for _, ad := range a.Addrs {
				if vipName(ad) != "" {
					continue
				}
				if ad.IsPrivate() {
					if warned == nil {
						c := audit.Warn("", fmt.Sprintf("%s answers %s from zone %s: an internal address (a Private Service Connect endpoint for Google APIs?), which this audit does not describe", h.Name, ad, a.Zone.Name), a.Path...)
						c.Host = h.Name
						warned = &c
					}
					continue
				}
				c := audit.Fail(verdict.ConditionDNS, fmt.Sprintf("%s answers %s from zone %s (%s), not the private VIP %s or the restricted VIP %s", h.Name, ad, a.Zone.Name, a.Zone.DnsName, privateVIP, restrictedVIP), a.Path...)
				return audit.WithChange(audit.WithResources(audit.WithHost(c, h.Name), a.Zone.Name), vipRecordChange(m, a))
			}
			okParts = append(okParts, fmt.Sprintf("%s: %s (zone %s)", h.Name, a, a.Zone.Name))
		}
	}
	if warned != nil {
		return *warned
	}
	return audit.Pass(strings.Join(okParts, "; "))
}

// recordChange adds the zone's wildcard CNAME to its apex, the shape
// Google's Private Google Access DNS set-up uses (*.pkg.dev CNAME pkg.dev.).
// The target is the zone's own record holding a VIP (private.googleapis.com.
// in a googleapis.com zone, the apex in pkg.dev and gcr.io zones).
func recordChange(m *Model, zone, apex string, recs []*dns.ResourceRecordSet) report.Change {
	target := apex
	for _, r := range recs {
		if r == nil || r.Type != "A" || len(r.Rrdatas) == 0 {
			continue
		}
		if a, err := netip.ParseAddr(r.Rrdatas[0]); err == nil && vipName(a) != "" {
			target = fqdn(r.Name)
			break
		}
	}
	return report.Change{Resource: zone, Kind: "dns-managed-zone",
		Action:  fmt.Sprintf("add the wildcard record *.%s CNAME %s (with an A record for %s holding the VIP's four addresses)", apex, target, target),
		Command: fmt.Sprintf("gcloud dns record-sets create '*.%s' --zone %s --project %s --type CNAME --ttl 300 --rrdatas %s", apex, zone, m.NetworkProject(), target)}
}

// vipRecordChange points the record that answered at the private VIP.
func vipRecordChange(m *Model, a answer) report.Change {
	name := fqdn(a.Host)
	for i := len(a.Path) - 1; i >= 0; i-- {
		if n, _, ok := strings.Cut(a.Path[i], " A "); ok {
			name = n
			break
		}
	}
	vip := []string{}
	for i := 0; i < 4; i++ {
		vip = append(vip, netip.AddrFrom4([4]byte{199, 36, 153, byte(8 + i)}).String())
	}
	return report.Change{Resource: a.Zone.Name, Kind: "dns-managed-zone",
		Action:  fmt.Sprintf("answer %s with private.googleapis.com's addresses (199.36.153.8/30), or the restricted VIP's (199.36.153.4/30) inside a VPC Service Controls perimeter", name),
		Command: fmt.Sprintf("gcloud dns record-sets update %s --zone %s --project %s --type A --ttl 300 --rrdatas %s", name, a.Zone.Name, m.NetworkProject(), strings.Join(vip, ","))}
}
