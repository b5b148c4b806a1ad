package azure

import (
	"cmp"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v8"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// nsgRule is one security rule, ready to evaluate.
type nsgRule struct {
	ID, Name  string
	Priority  int32
	Allow     bool
	Outbound  bool
	Protocol  string
	SrcPrefix []string
	DstPrefix []string
	DstPorts  []string
	SrcASG    bool
	DstASG    bool
	IsDefault bool
}

// defaultOutbound are the rules every NSG has, for files that leave them out.
var defaultOutbound = []nsgRule{
	{Name: "AllowVnetOutBound", Priority: 65000, Allow: true, Outbound: true, Protocol: "*", SrcPrefix: []string{"VirtualNetwork"}, DstPrefix: []string{"VirtualNetwork"}, DstPorts: []string{"*"}, IsDefault: true},
	{Name: "AllowInternetOutBound", Priority: 65001, Allow: true, Outbound: true, Protocol: "*", SrcPrefix: []string{"*"}, DstPrefix: []string{"Internet"}, DstPorts: []string{"*"}, IsDefault: true},
	{Name: "DenyAllOutBound", Priority: 65500, Allow: false, Outbound: true, Protocol: "*", SrcPrefix: []string{"*"}, DstPrefix: []string{"*"}, DstPorts: []string{"*"}, IsDefault: true},
}

func readRule(r *armnetwork.SecurityRule, isDefault bool) (nsgRule, bool) {
	if r == nil || r.Properties == nil {
		return nsgRule{}, false
	}
	p := r.Properties
	out := nsgRule{ID: str(r.ID), Name: str(r.Name), IsDefault: isDefault}
	if p.Priority != nil {
		out.Priority = *p.Priority
	}
	out.Allow = p.Access != nil && strings.EqualFold(string(*p.Access), "Allow")
	out.Outbound = p.Direction != nil && strings.EqualFold(string(*p.Direction), "Outbound")
	if p.Protocol != nil {
		out.Protocol = string(*p.Protocol)
	}
	out.SrcPrefix = joinPrefixes(p.SourceAddressPrefix, p.SourceAddressPrefixes)
	out.DstPrefix = joinPrefixes(p.DestinationAddressPrefix, p.DestinationAddressPrefixes)
	out.DstPorts = joinPrefixes(p.DestinationPortRange, p.DestinationPortRanges)
	out.SrcASG = len(p.SourceApplicationSecurityGroups) > 0
	out.DstASG = len(p.DestinationApplicationSecurityGroups) > 0
	return out, true
}

func joinPrefixes(one *string, many []*string) []string {
	var out []string
	if s := strings.TrimSpace(str(one)); s != "" {
		out = append(out, s)
	}
	for _, s := range many {
		if v := strings.TrimSpace(str(s)); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// outboundRules are an NSG's outbound rules, custom and default, in the
// order Azure evaluates them (priority, lowest first).
func outboundRules(g *armnetwork.SecurityGroup) []nsgRule {
	var out []nsgRule
	hasDefault := false
	if g.Properties != nil {
		for _, r := range g.Properties.SecurityRules {
			if nr, ok := readRule(r, false); ok && nr.Outbound {
				out = append(out, nr)
			}
		}
		for _, r := range g.Properties.DefaultSecurityRules {
			if nr, ok := readRule(r, true); ok {
				hasDefault = true
				if nr.Outbound {
					out = append(out, nr)
				}
			}
		}
	}
	if !hasDefault {
		out = append(out, defaultOutbound...)
	}
	sortRules(out)
	return out
}

// sortRules orders rules as Azure evaluates them: lowest priority first.
func sortRules(rs []nsgRule) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Priority < rs[j].Priority })
}

// dest is what a rule is matched against: a private address, or a public
// host known only by the service it belongs to.
type dest struct {
	Addr    netip.Addr // valid for a private endpoint address
	Service string     // "AzureContainerRegistry" or "Storage" for a public host
	Host    string
	V6      bool // a public host dialled over IPv6 (a dual-stack registry)
}

// tri is a three-valued match: a rule that names an application security
// group or a public prefix against a public host cannot be decided.
type tri int

const (
	no tri = iota
	yes
	maybe
)

// nsgEval evaluates one NSG for TCP 443 from the node subnet to d.
type nsgEval struct {
	vnet   []netip.Prefix // what the VirtualNetwork tag stands for here
	src    []netip.Prefix // the node subnet
	region string
}

func (e *nsgEval) protoOK(p string) bool {
	return p == "" || p == "*" || strings.EqualFold(p, "Tcp") || strings.EqualFold(p, "Any")
}

func portOK(ports []string) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		p = strings.TrimSpace(p)
		if p == "*" || p == "443" {
			return true
		}
		if lo, hi, ok := strings.Cut(p, "-"); ok {
			l, e1 := strconv.Atoi(strings.TrimSpace(lo))
			h, e2 := strconv.Atoi(strings.TrimSpace(hi))
			if e1 == nil && e2 == nil && l <= 443 && 443 <= h {
				return true
			}
		}
	}
	return false
}

func (e *nsgEval) srcMatch(r nsgRule) tri {
	if r.SrcASG {
		return maybe
	}
	best := no
	for _, s := range r.SrcPrefix {
		switch {
		case s == "*" || strings.EqualFold(s, "Any"):
			return yes
		case strings.EqualFold(s, "VirtualNetwork"):
			return yes // the node subnet is in its own VNet
		}
		if pf, ok := parsePrefixOrAddr(s); ok {
			all, some := true, false
			for _, sp := range e.src {
				if pf.Bits() <= sp.Bits() && pf.Contains(sp.Addr()) {
					some = true
				} else {
					all = false
					if pf.Overlaps(sp) {
						some = true
					}
				}
			}
			if all && len(e.src) > 0 {
				return yes
			}
			if some {
				best = maybe // only some node addresses match
			}
		}
	}
	return best
}

func (e *nsgEval) dstMatch(r nsgRule, d dest) tri {
	if r.DstASG {
		return maybe
	}
	best := no
	for _, s := range r.DstPrefix {
		if s == "*" || strings.EqualFold(s, "Any") {
			return yes
		}
		tag, region, _ := strings.Cut(s, ".")
		switch {
		case strings.EqualFold(s, "VirtualNetwork"):
			if d.Addr.IsValid() && inAny(d.Addr, e.vnet) {
				return yes
			}
			continue
		case strings.EqualFold(s, "Internet"):
			if !d.Addr.IsValid() || !inAny(d.Addr, e.vnet) {
				return yes
			}
			continue
		case strings.EqualFold(tag, "AzureCloud"):
			if !d.Addr.IsValid() && (region == "" || strings.EqualFold(region, e.region)) {
				return yes
			}
			continue
		case strings.EqualFold(tag, "AzureContainerRegistry"), strings.EqualFold(tag, "Storage"):
			// service tags hold public addresses, never a private endpoint's
			if !d.Addr.IsValid() && strings.EqualFold(tag, d.Service) {
				if region == "" || strings.EqualFold(region, e.region) {
					return yes
				}
				best = maybe // another region's tag: the registry's region decides
			}
			continue
		}
		if pf, ok := parsePrefixOrAddr(s); ok {
			if d.Addr.IsValid() {
				if pf.Contains(d.Addr) {
					return yes
				}
			} else if pf.Addr().Is6() != d.V6 {
				continue // a prefix of the other family never matches
			} else if pf.Bits() == 0 {
				return yes // 0.0.0.0/0 or ::/0 holds every address of its family
			} else if !pf.Addr().IsPrivate() {
				best = maybe // a public prefix against a public host of unknown address
			}
			continue
		}
		if !d.Addr.IsValid() {
			best = maybe // another service tag against a public host
		}
	}
	return best
}

func parsePrefixOrAddr(s string) (netip.Prefix, bool) {
	if pf, err := netip.ParsePrefix(s); err == nil {
		return pf.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

// decide walks the rules in priority order; the first that matches decides.
func (e *nsgEval) decide(rules []nsgRule, d dest) (nsgRule, tri) {
	for _, r := range rules {
		if !e.protoOK(r.Protocol) || !portOK(r.DstPorts) {
			continue
		}
		s := e.srcMatch(r)
		if s == no {
			continue
		}
		t := e.dstMatch(r, d)
		if t == no {
			continue
		}
		if s == yes && t == yes {
			return r, yes
		}
		return r, maybe
	}
	return nsgRule{}, no
}

// virtualNetworkTag is what the VirtualNetwork service tag covers for this
// subnet: the VNet's address space, the peered spaces, the prefixes of
// routes learned from a gateway, and the prefixes of user routes.
func (m *Model) virtualNetworkTag(n *nodeSubnet) []netip.Prefix {
	out := append([]netip.Prefix(nil), m.vnetPrefixes()...)
	for _, p := range m.Peerings {
		if p != nil && peeringConnected(p) {
			for _, pf := range peeringPrefixes(p) {
				out = appendPrefix(out, pf)
			}
		}
	}
	for _, r := range n.Routes.Routes {
		switch {
		case r.NextHop == hopVnetLocal, r.NextHop == hopPeering, r.NextHop == hopGlobalPeer, r.NextHop == hopGateway, strings.EqualFold(r.Source, "User"):
			out = appendPrefix(out, r.Prefix)
		}
	}
	out = appendPrefix(out, netip.MustParsePrefix("168.63.129.16/32"))
	return out
}

// checkNSG evaluates the node subnet's NSG for outbound TCP 443 to every
// private endpoint address (and, for public hosts, their service tags), in
// priority order with the default rules.
func checkNSG(m *Model, n *nodeSubnet) report.CheckResult {
	const cond = verdict.ConditionRoute
	if n.Subnet == nil {
		return audit.Warn(cond, "the subnet is not described: "+FileSubnet(lastName(n.ID))+" is missing")
	}
	var nsgID string
	if n.Subnet.Properties != nil && n.Subnet.Properties.NetworkSecurityGroup != nil {
		nsgID = str(n.Subnet.Properties.NetworkSecurityGroup.ID)
	}
	if nsgID == "" {
		return audit.Pass(fmt.Sprintf("no NSG on subnet %s: outbound TCP 443 is not filtered there", lastName(n.ID)),
			"NSGs on the node NICs (the AKS-managed aks-agentpool-*-nsg) are outside the contract")
	}
	if n.NSG == nil {
		return audit.WithResources(audit.Warn(cond, fmt.Sprintf("NSG %s is not described: %s is missing", lastName(nsgID), FileNSG(lastName(nsgID)))), nsgID)
	}
	var evidence []string
	rules := outboundRules(n.NSG)
	ev := &nsgEval{vnet: m.virtualNetworkTag(n), src: n.Prefixes, region: m.registryRegion()}
	var bad *finding
	warned := ""
	for _, h := range n.Hosts {
		var ds []dest
		if h.private() {
			for _, a := range h.peAddrs() {
				ds = append(ds, dest{Addr: a, Host: h.Name})
			}
		} else {
			svc := "AzureContainerRegistry"
			if h.Name == BlobWildcard {
				svc = "Storage"
			}
			ds = append(ds, dest{Service: svc, Host: h.Name})
		}
		for _, d := range ds {
			what := d.Host
			if d.Addr.IsValid() {
				what = d.Addr.String() + " (" + d.Host + ")"
			}
			r, t := ev.decide(rules, d)
			switch {
			case t == no:
				bad = first(bad, &finding{host: d.Host, summary: fmt.Sprintf("no rule of %s matches TCP 443 to %s", lastName(nsgID), what)})
			case t == maybe:
				evidence = append(evidence, fmt.Sprintf("TCP 443 to %s: rule %s (priority %d, %s) may match (an application security group, a partial source, or a public prefix): confirm it", what, r.Name, r.Priority, access(r)))
				if !r.Allow {
					warned = cmp.Or(warned, fmt.Sprintf("rule %s (priority %d, Deny) of %s may block TCP 443 to %s", r.Name, r.Priority, lastName(nsgID), what))
				}
			case r.Allow:
				evidence = append(evidence, fmt.Sprintf("TCP 443 to %s: allowed by %s (priority %d)", what, r.Name, r.Priority))
			default:
				rid := r.ID
				if rid == "" {
					rid = nsgID + "/securityRules/" + r.Name
				}
				dst := d.Service
				if d.Addr.IsValid() {
					dst = d.Addr.String() + "/32"
				}
				prio := freePriority(rules, r.Priority)
				f := &finding{host: d.Host,
					summary:   fmt.Sprintf("%s denies TCP 443 from %s to %s: rule %s (priority %d) matches first", lastName(nsgID), n.poolsString(), what, r.Name, r.Priority),
					resources: []string{rid},
				}
				if prio > 0 {
					f.changes = []report.Change{{Resource: nsgID, Kind: "Microsoft.Network/networkSecurityGroups",
						Action:  fmt.Sprintf("add an outbound rule allowing TCP 443 to %s at a priority before %s (%d)", dst, r.Name, r.Priority),
						Command: fmt.Sprintf("az network nsg rule create -g %s --nsg-name %s -n allow-acr-443-%s --priority %d --direction Outbound --access Allow --protocol Tcp --source-address-prefixes %s --destination-address-prefixes %s --destination-port-ranges 443", resourceGroupOf(nsgID), lastName(nsgID), ruleSuffix(dst), prio, srcArg(n), dst),
					}}
				} else {
					f.changes = []report.Change{{Resource: rid, Kind: "Microsoft.Network/networkSecurityGroups/securityRules",
						Action:  fmt.Sprintf("narrow rule %s so that it does not match TCP 443 to %s (no free priority before it)", r.Name, dst),
						Command: fmt.Sprintf("az network nsg rule show -g %s --nsg-name %s -n %s", resourceGroupOf(nsgID), lastName(nsgID), r.Name)}}
				}
				bad = first(bad, f)
			}
		}
	}
	evidence = append(evidence, "NSGs on the node NICs and on the private endpoint's subnet (when its network policies are on) are outside the contract")
	switch {
	case bad != nil:
		c := bad.fail(cond, evidence)
		c.Resources = append(c.Resources, nsgID)
		return c
	case warned != "":
		return audit.WithResources(audit.Warn(cond, warned, evidence...), nsgID)
	}
	return audit.WithResources(audit.Pass(fmt.Sprintf("%s allows TCP 443 from %s to every host of the pull", lastName(nsgID), n.poolsString()), evidence...), nsgID)
}

func access(r nsgRule) string {
	if r.Allow {
		return "Allow"
	}
	return "Deny"
}

// freePriority is the highest unused custom priority below p (100-4096),
// so a new allow rule is evaluated just before the one that denies.
func freePriority(rules []nsgRule, p int32) int32 {
	used := map[int32]bool{}
	for _, r := range rules {
		used[r.Priority] = true
	}
	start := p - 1
	if start > 4096 {
		start = 4096
	}
	for q := start; q >= 100; q-- {
		if !used[q] {
			return q
		}
	}
	return 0
}

func ruleSuffix(dst string) string {
	s := strings.NewReplacer(".", "-", "/", "-", ":", "-").Replace(dst)
	return strings.ToLower(s)
}

func srcArg(n *nodeSubnet) string {
	if len(n.Prefixes) == 0 {
		return "VirtualNetwork"
	}
	ss := make([]string, len(n.Prefixes))
	for i, p := range n.Prefixes {
		ss[i] = p.String()
	}
	return strings.Join(ss, " ")
}

// registryRegion is the registry's location (eastus), for regional tags.
func (m *Model) registryRegion() string {
	if m.Registry == nil {
		return ""
	}
	return strings.ToLower(strings.ReplaceAll(str(m.Registry.Location), " ", ""))
}
