package gcp

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	dns "google.golang.org/api/dns/v1"
)

// The VIPs of Private Google Access: private.googleapis.com and
// restricted.googleapis.com (the one VPC Service Controls wants).
var (
	privateVIP    = netip.MustParsePrefix("199.36.153.8/30")
	restrictedVIP = netip.MustParsePrefix("199.36.153.4/30")
)

func vipName(a netip.Addr) string {
	switch {
	case privateVIP.Contains(a):
		return "private.googleapis.com"
	case restrictedVIP.Contains(a):
		return "restricted.googleapis.com"
	}
	return ""
}

// answer is what the node's resolver (Cloud DNS, 169.254.169.254) answers
// for a host, from the configuration.
type answer struct {
	Host string
	// Public: no private zone bound to the network holds the name: Cloud
	// DNS answers Google's public addresses.
	Public bool
	Addrs  []netip.Addr
	// NXDomain: a private zone holds the name's suffix but no record for
	// it (nor a wildcard): the node gets NXDOMAIN (or no address).
	NXDomain bool
	Zone     *dns.ManagedZone   // the zone that answered (the first one, for CNAME chains)
	Zones    []*dns.ManagedZone // every zone the answer went through
	Path     []string           // the records followed
	// Undecided says why the configuration does not decide the answer
	// (a zone's records not described, a forwarding or peering zone).
	Undecided string
}

func (a answer) ok() bool { return a.Undecided == "" && !a.NXDomain && (a.Public || len(a.Addrs) > 0) }

func (a answer) String() string {
	switch {
	case a.Undecided != "":
		return "undecided (" + a.Undecided + ")"
	case a.NXDomain:
		return "NXDOMAIN"
	case a.Public:
		return "Google's public addresses"
	}
	var s []string
	seen := map[string]bool{}
	for _, x := range a.Addrs {
		str := x.String()
		for _, vip := range []netip.Prefix{privateVIP, restrictedVIP} {
			if vip.Contains(x) {
				str = vip.String() + " (" + vipName(x) + ")"
			}
		}
		if !seen[str] {
			seen[str] = true
			s = append(s, str)
		}
	}
	return strings.Join(s, ", ")
}

// boundZones are the private zones the node network's queries see: bound to
// the network, or to this cluster (GKE cluster-scoped zones).
func (m *Model) boundZones() []*dns.ManagedZone {
	var out []*dns.ManagedZone
	net := m.NetworkPath()
	cluster := "projects/" + m.ClusterProject() + "/locations/" + m.Location() + "/clusters/" + m.Cluster.Name
	for _, z := range m.Zones {
		if z == nil || z.Visibility != "private" || z.PrivateVisibilityConfig == nil {
			continue
		}
		bound := false
		for _, n := range z.PrivateVisibilityConfig.Networks {
			if n != nil && sameRes(n.NetworkUrl, net) {
				bound = true
			}
		}
		for _, c := range z.PrivateVisibilityConfig.GkeClusters {
			if c != nil && strings.EqualFold(strings.TrimPrefix(c.GkeClusterName, "//container.googleapis.com/"), cluster) {
				bound = true
			}
		}
		if bound {
			out = append(out, z)
		}
	}
	return out
}

// asIfBound are the bound zones and the private zones of the network's
// project that are bound elsewhere (or nowhere) and hold one of names or
// a VIP name: what the nodes would see were those bound to their network.
func (m *Model) asIfBound(names []string) []*dns.ManagedZone {
	out := m.boundZones()
	bound := map[*dns.ManagedZone]bool{}
	for _, z := range out {
		bound[z] = true
	}
	names = append(names, "private.googleapis.com", "restricted.googleapis.com")
	for _, z := range m.Zones {
		if z == nil || bound[z] || z.Visibility != "private" || z.ForwardingConfig != nil || z.PeeringConfig != nil {
			continue
		}
		for _, n := range names {
			if d := fqdn(z.DnsName); fqdn(n) == d || strings.HasSuffix(fqdn(n), "."+d) {
				out = append(out, z)
				break
			}
		}
	}
	return out
}

// binding is a private zone of the network's project, not bound to the
// nodes' network, that would answer a host with a VIP: for a network built
// to reach Google only through the VIP, the change is binding it.
type zoneBinding struct {
	Zones  []*dns.ManagedZone // the zones to bind (every unbound zone of the answer)
	Answer answer             // the answer once bound
}

// unboundAnswer is what the host would answer were the project's other
// private zones for it bound; ok false when no unbound zone takes part.
func (m *Model) unboundAnswer(host string, hosts []string) (zoneBinding, bool) {
	a := m.resolveIn(host, m.asIfBound(hosts))
	bound := map[*dns.ManagedZone]bool{}
	for _, z := range m.boundZones() {
		bound[z] = true
	}
	var b zoneBinding
	for _, z := range a.Zones {
		if !bound[z] && !slices.Contains(b.Zones, z) {
			b.Zones = append(b.Zones, z)
		}
	}
	b.Answer = a
	return b, len(b.Zones) > 0 && !a.Public
}

func fqdn(h string) string { return strings.ToLower(strings.TrimSuffix(h, ".")) + "." }

// zoneFor is the most specific bound zone whose DNS name is a suffix of name.
func zoneFor(zones []*dns.ManagedZone, name string) *dns.ManagedZone {
	var best *dns.ManagedZone
	for _, z := range zones {
		d := fqdn(z.DnsName)
		if (name == d || strings.HasSuffix(name, "."+d)) && (best == nil || len(d) > len(fqdn(best.DnsName))) {
			best = z
		}
	}
	return best
}

// resolve answers host as Cloud DNS would for the node network: the most
// specific bound private zone decides; within it the exact name, else the
// closest wildcard; CNAMEs are followed (at most 8).
func (m *Model) resolve(host string) answer { return m.resolveIn(host, m.boundZones()) }

// resolveIn answers host as Cloud DNS would if zones were the ones bound.
func (m *Model) resolveIn(host string, zones []*dns.ManagedZone) answer {
	a := answer{Host: host}
	name := fqdn(host)
	for depth := 0; depth < 8; depth++ {
		z := zoneFor(zones, name)
		if z == nil {
			a.Public = true
			if depth > 0 {
				a.Path = append(a.Path, name+" is in no private zone: public")
			}
			return a
		}
		if a.Zone == nil {
			a.Zone = z
		}
		a.Zones = append(a.Zones, z)
		switch {
		case z.ForwardingConfig != nil:
			a.Undecided = fmt.Sprintf("zone %s (%s) forwards to %s", z.Name, z.DnsName, forwardTargets(z))
			return a
		case z.PeeringConfig != nil:
			a.Undecided = fmt.Sprintf("zone %s (%s) is a peering zone to %s", z.Name, z.DnsName, z.PeeringConfig.TargetNetwork.NetworkUrl)
			return a
		}
		recs, ok := m.Records[z.Name]
		if !ok {
			a.Undecided = fmt.Sprintf("the records of zone %s (%s) are not described (%s)", z.Name, z.DnsName, FileRecords(z.Name))
			return a
		}
		rs := lookup(recs, name, fqdn(z.DnsName))
		if len(rs) == 0 {
			a.NXDomain = true
			a.Path = append(a.Path, fmt.Sprintf("zone %s (%s) has no record for %s and no wildcard above it", z.Name, z.DnsName, name))
			return a
		}
		var cname string
		for _, r := range rs {
			switch r.Type {
			case "A":
				for _, d := range r.Rrdatas {
					if ad, err := netip.ParseAddr(d); err == nil {
						a.Addrs = append(a.Addrs, ad)
					}
				}
				a.Path = append(a.Path, fmt.Sprintf("%s A %s (zone %s)", r.Name, strings.Join(r.Rrdatas, " "), z.Name))
			case "CNAME":
				if len(r.Rrdatas) > 0 {
					cname = fqdn(r.Rrdatas[0])
					a.Path = append(a.Path, fmt.Sprintf("%s CNAME %s (zone %s)", r.Name, cname, z.Name))
				}
			}
		}
		if len(a.Addrs) > 0 {
			return a
		}
		if cname == "" {
			a.NXDomain = true // the name exists, with no A record: no address
			a.Path = append(a.Path, fmt.Sprintf("zone %s (%s) has %s but no A or CNAME record for it", z.Name, z.DnsName, name))
			return a
		}
		name = cname
	}
	a.Undecided = "a CNAME chain longer than 8"
	return a
}

// lookup is the record sets that answer name in a zone: the exact name, or
// the closest enclosing wildcard (*.parent) when the name does not exist.
func lookup(recs []*dns.ResourceRecordSet, name, apex string) []*dns.ResourceRecordSet {
	byName := map[string][]*dns.ResourceRecordSet{}
	for _, r := range recs {
		if r != nil {
			byName[fqdn(r.Name)] = append(byName[fqdn(r.Name)], r)
		}
	}
	if rs, ok := byName[name]; ok {
		return rs
	}
	for n := name; n != apex && strings.Contains(n, "."); {
		_, parent, _ := strings.Cut(n, ".")
		if parent == "" {
			break
		}
		if rs, ok := byName["*."+parent]; ok {
			return rs
		}
		if _, exists := byName[parent]; exists && parent != apex {
			return nil // an existing closer node blocks wildcards above it
		}
		n = parent
	}
	return nil
}

func forwardTargets(z *dns.ManagedZone) string {
	var s []string
	for _, t := range z.ForwardingConfig.TargetNameServers {
		if t != nil {
			s = append(s, t.Ipv4Address)
		}
	}
	return strings.Join(s, ", ")
}
