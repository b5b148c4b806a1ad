package scenario

import (
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

var (
	nameRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	hostRE     = regexp.MustCompile(`^[a-z][a-z0-9-]{0,14}$`)
	dnsNameRE  = regexp.MustCompile(`^([a-zA-Z0-9_]([a-zA-Z0-9_-]{0,61}[a-zA-Z0-9_])?\.)*[a-zA-Z0-9_]([a-zA-Z0-9_-]{0,61}[a-zA-Z0-9_])?\.?$`)
	platformRE = regexp.MustCompile(`^[a-z0-9]+/[a-z0-9]+(/[a-z0-9.]+)?$`)
)

// Validate checks a scenario and returns the first problem as a one-line
// error naming the field (e.g. `hosts.node.routes[0].to: ...`).
func (t *Scenario) Validate() error {
	v := &validator{t: t}
	v.top()
	v.subnets()
	v.hosts()
	v.tunnels()
	v.pathHosts()
	v.dns()
	v.nat64()
	v.services()
	v.node()
	v.proxy()
	v.probe()
	v.expect()
	v.pathExpect()
	v.cluster()
	return v.err
}

type validator struct {
	t   *Scenario
	err error
}

func (v *validator) fail(field, format string, a ...any) {
	if v.err == nil {
		v.err = fmt.Errorf("%s: %s", field, fmt.Sprintf(format, a...))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func (v *validator) top() {
	t := v.t
	if t.APIVersion != report.APIVersion {
		v.fail("apiVersion", "want %q, got %q", report.APIVersion, t.APIVersion)
	}
	if t.Kind != Kind {
		v.fail("kind", "want %q, got %q", Kind, t.Kind)
	}
	if !nameRE.MatchString(t.Name) {
		v.fail("name", "want a lowercase name of letters, digits and dashes, got %q", t.Name)
	}
	if len(t.Subnets) == 0 {
		v.fail("subnets", "want at least one subnet")
	}
	if len(t.Hosts) == 0 {
		v.fail("hosts", "want at least one host")
	}
}

func (v *validator) subnets() {
	seen := map[netip.Prefix]string{}
	for _, name := range sortedKeys(v.t.Subnets) {
		s := v.t.Subnets[name]
		f := "subnets." + name
		if s == nil {
			v.fail(f, "want a mapping with cidr and router")
			continue
		}
		if !hostRE.MatchString(name) {
			v.fail(f, "subnet name must be 1-15 lowercase letters, digits or dashes, starting with a letter")
		}
		if msg := cidrProblem(s.CIDR); msg != "" {
			v.fail(f+".cidr", "%s", msg)
			continue
		}
		p, _ := netip.ParsePrefix(s.CIDR)
		if p.Masked() != p {
			v.fail(f+".cidr", "%s has host bits set; want %s", s.CIDR, p.Masked())
		}
		for q, other := range seen {
			if q.Overlaps(p) {
				v.fail(f+".cidr", "%s overlaps subnet %s (%s)", p, other, q)
			}
		}
		seen[p] = name
		if overlapsInternet(p) {
			v.fail(f+".cidr", "%s overlaps the lab's internet ranges 198.51.100.0/24 and 203.0.113.0/24; use private space", p)
		}
		if _, ok := v.t.Hosts[s.Router]; !ok {
			v.fail(f+".router", "want the name of a host that owns this subnet's bridge and gateway, got %q", s.Router)
		}
		if s.Gateway != "" {
			a, err := netip.ParseAddr(s.Gateway)
			if err != nil || !usable(p, a) {
				v.fail(f+".gateway", "want a host address inside %s, got %q", p, s.Gateway)
			}
		}
	}
}

func overlapsInternet(p netip.Prefix) bool {
	for _, q := range internetPrefixes {
		if q.Overlaps(p) {
			return true
		}
	}
	return false
}

// usable reports whether a is a host address of p (not network, not broadcast).
func usable(p netip.Prefix, a netip.Addr) bool {
	if p.Addr().Is6() {
		return usable6(p, a)
	}
	if !a.Is4() || !p.Contains(a) || a == p.Masked().Addr() {
		return false
	}
	return a != broadcast(p)
}

func broadcast(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	n |= (1 << (32 - p.Bits())) - 1
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
}

func (v *validator) hosts() {
	t := v.t
	addrs := map[netip.Addr]string{}
	for _, sn := range sortedKeys(t.Subnets) {
		if s := t.Subnets[sn]; s != nil && s.CIDR != "" {
			if _, err := netip.ParsePrefix(s.CIDR); err == nil {
				addrs[s.GatewayAddr()] = "the gateway of subnet " + sn
			}
		}
	}
	for _, name := range sortedKeys(t.Hosts) {
		h := t.Hosts[name]
		f := "hosts." + name
		if !hostRE.MatchString(name) {
			v.fail(f, "host name must be 1-15 lowercase letters, digits or dashes, starting with a letter")
		}
		if h == nil {
			h = &Host{}
			t.Hosts[name] = h
		}
		routed := t.RoutedSubnets(name)
		if len(h.Interfaces) == 0 && len(routed) == 0 {
			v.fail(f+".interfaces", "want at least one subnet: address (or make the host a subnet's router)")
		}
		connected := t.tunnelPrefixes(name)
		for _, sn := range routed {
			connected = append(connected, t.Subnets[sn].Prefix())
		}
		for _, sn := range sortedKeys(h.Interfaces) {
			ff := f + ".interfaces." + sn
			s, ok := t.Subnets[sn]
			if !ok || s == nil {
				v.fail(ff, "no such subnet %q", sn)
				continue
			}
			if s.Router == name {
				v.fail(ff, "%s routes subnet %s and holds its gateway %s; remove this interface", name, sn, s.GatewayAddr())
				continue
			}
			a, err := netip.ParseAddr(h.Interfaces[sn])
			if err != nil || !usable(s.Prefix(), a) {
				v.fail(ff, "want a host address inside %s, got %q", s.CIDR, h.Interfaces[sn])
				continue
			}
			if other, dup := addrs[a]; dup {
				v.fail(ff, "address %s is already %s", a, other)
			}
			addrs[a] = "host " + name + " on " + sn
			connected = append(connected, s.Prefix())
		}
		for i, r := range h.Routes {
			ff := fmt.Sprintf("%s.routes[%d]", f, i)
			if _, err := ParseDest(r.To); err != nil {
				v.fail(ff+".to", "%v", err)
			}
			switch r.Type {
			case "":
				a, err := netip.ParseAddr(r.Via)
				if err != nil || !plainAddr(a) {
					v.fail(ff+".via", "want the next hop's IPv4 or IPv6 address, got %q", r.Via)
					continue
				}
				if !inAny(connected, a) {
					v.fail(ff+".via", "next hop %s is not on any subnet of host %s", a, name)
				}
				v.routeFamily(ff, r)
			case "blackhole", "unreachable", "prohibit":
				if r.Via != "" {
					v.fail(ff+".via", "a %s route has no next hop", r.Type)
				}
			default:
				v.fail(ff+".type", "want blackhole, unreachable or prohibit (or nothing), got %q", r.Type)
			}
		}
		for i, r := range h.Firewall {
			v.rule(fmt.Sprintf("%s.firewall[%d]", f, i), r)
		}
	}
}

func inAny(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ValidateRule checks one firewall rule (as Validate does a host's), for
// rules given while a lab runs.
func ValidateRule(r Rule) error {
	v := &validator{}
	v.rule("rule", r)
	return v.err
}

func (v *validator) rule(f string, r Rule) {
	switch r.Action {
	case "drop", "reject", "clamp-mss":
	default:
		v.fail(f+".action", "want drop, reject or clamp-mss, got %q", r.Action)
	}
	v.pathRule(f, r)
	switch r.Chain {
	case "", "forward", "input", "output":
	default:
		v.fail(f+".chain", "want forward, input or output, got %q", r.Chain)
	}
	for _, x := range []struct{ n, s string }{{"from", r.From}, {"to", r.To}} {
		if x.s == "" {
			continue
		}
		if _, err := ParseDest(x.s); err != nil {
			v.fail(f+"."+x.n, "%v", err)
		}
	}
	v.ruleFamily(f, r)
	switch r.Proto {
	case "", "tcp", "udp", "icmp":
	default:
		v.fail(f+".proto", "want tcp, udp or icmp, got %q", r.Proto)
	}
	if r.Port != 0 {
		if r.Proto != "tcp" && r.Proto != "udp" {
			v.fail(f+".port", "a port needs proto tcp or udp")
		}
		if r.Port < 1 || r.Port > 65535 {
			v.fail(f+".port", "want 1-65535, got %d", r.Port)
		}
	}
}

var rcodes = map[string]bool{"NXDOMAIN": true, "SERVFAIL": true, "REFUSED": true, "NODATA": true, "drop": true}

func (v *validator) dns() {
	for _, name := range sortedKeys(v.t.DNS) {
		d := v.t.DNS[name]
		f := "dns." + name
		if d == nil {
			v.fail(f, "want a mapping with host and records")
			continue
		}
		if _, ok := v.t.Hosts[d.Host]; !ok {
			v.fail(f+".host", "no such host %q", d.Host)
		}
		if d.Port < 0 || d.Port > 65535 {
			v.fail(f+".port", "want 1-65535, got %d", d.Port)
		}
		if d.Default != "" && d.Default != "NXDOMAIN" && d.Default != "REFUSED" {
			v.fail(f+".default", "want NXDOMAIN or REFUSED, got %q", d.Default)
		}
		for i, z := range d.Zones {
			if !dnsNameRE.MatchString(z) || z == "." {
				v.fail(fmt.Sprintf("%s.zones[%d]", f, i), "not a DNS name: %q", z)
			}
		}
		for _, rn := range sortedKeys(d.Records) {
			r := d.Records[rn]
			ff := f + ".records." + rn
			if !dnsNameRE.MatchString(rn) {
				v.fail(ff, "not a DNS name")
			}
			if r == nil {
				v.fail(ff, "want a, cname or rcode")
				continue
			}
			n := 0
			if len(r.A) > 0 || len(r.AAAA) > 0 {
				n++
			}
			if r.CNAME != "" {
				n++
				if !dnsNameRE.MatchString(r.CNAME) {
					v.fail(ff+".cname", "not a DNS name: %q", r.CNAME)
				}
			}
			if r.Rcode != "" {
				n++
				if !rcodes[r.Rcode] {
					v.fail(ff+".rcode", "want NXDOMAIN, SERVFAIL, REFUSED, NODATA or drop, got %q", r.Rcode)
				}
			}
			if n != 1 {
				v.fail(ff, "want exactly one of a, cname or rcode (a and aaaa go together)")
			}
			for i, a := range r.A {
				if ip, err := netip.ParseAddr(a); err != nil || !ip.Is4() {
					v.fail(fmt.Sprintf("%s.a[%d]", ff, i), "want an IPv4 address, got %q", a)
				}
			}
			v.records6(ff, r)
			if r.TTL < 0 {
				v.fail(ff+".ttl", "want 0 or more seconds, got %d", r.TTL)
			}
		}
	}
}

var tlsModes = map[string]bool{"": true, "trusted": true, "untrusted": true, "wrong-name": true, "expired": true, "none": true}

func (v *validator) service(f string, s *Service) {
	if _, ok := v.t.Hosts[s.Host]; !ok {
		v.fail(f+".host", "no such host %q", s.Host)
	}
	if s.Name == "" || !dnsNameRE.MatchString(s.Name) || !strings.Contains(s.Name, ".") {
		v.fail(f+".name", "want the DNS name the service is reached by, got %q", s.Name)
	}
	if s.Port < 0 || s.Port > 65535 {
		v.fail(f+".port", "want 1-65535, got %d", s.Port)
	}
	if !tlsModes[s.TLS] {
		v.fail(f+".tls", "want trusted, untrusted, wrong-name, expired or none, got %q", s.TLS)
	}
}

func (v *validator) services() {
	t := v.t
	if t.Registry == nil {
		v.fail("registry", "want the registry section (host, name, auth, image)")
		return
	}
	r := t.Registry
	v.service("registry", &r.Service)
	switch r.Auth.Mode {
	case "", "none":
	case "basic":
		if len(r.Auth.Users) == 0 {
			v.fail("registry.auth.users", "basic auth needs at least one user")
		}
	case "bearer":
		if len(r.Auth.Users) == 0 {
			v.fail("registry.auth.users", "bearer auth needs at least one user")
		}
		if t.Token == nil {
			v.fail("token", "bearer auth needs a token section (host, name)")
		}
	default:
		v.fail("registry.auth.mode", "want none, basic or bearer, got %q", r.Auth.Mode)
	}
	for i, u := range r.Auth.Users {
		ff := fmt.Sprintf("registry.auth.users[%d]", i)
		if u.Name == "" || strings.ContainsAny(u.Name, ": \t") {
			v.fail(ff+".name", "want a user name without ':' or spaces, got %q", u.Name)
		}
		if u.Password == "" {
			v.fail(ff+".password", "want a password")
		}
	}
	im := r.Image
	if im.Repository == "" || strings.ToLower(im.Repository) != im.Repository || strings.HasPrefix(im.Repository, "/") {
		v.fail("registry.image.repository", "want a lowercase repository path such as app/web, got %q", im.Repository)
	}
	if im.Tag == "" {
		v.fail("registry.image.tag", "want a tag such as 1.0")
	}
	for i, p := range im.Platforms {
		if !platformRE.MatchString(p) {
			v.fail(fmt.Sprintf("registry.image.platforms[%d]", i), "want OS/ARCH[/VARIANT] such as linux/amd64, got %q", p)
		}
	}
	if im.Layers < 0 || im.Layers > 16 {
		v.fail("registry.image.layers", "want 1-16, got %d", im.Layers)
	}
	if im.LayerSize < 0 || im.LayerSize > 64<<20 {
		v.fail("registry.image.layerSize", "want up to 64 MiB, got %d", im.LayerSize)
	}
	used := map[string]string{}
	claim := func(f string, s *Service) {
		k := fmt.Sprintf("%s:%d", s.Host, s.EffectivePort())
		if other, ok := used[k]; ok {
			v.fail(f+".port", "host %s already runs %s on port %d", s.Host, other, s.EffectivePort())
		}
		used[k] = f
	}
	claim("registry", &r.Service)
	if t.Token != nil {
		v.service("token", t.Token)
		claim("token", t.Token)
	}
	if t.Blob != nil {
		v.service("blob", &t.Blob.Service)
		claim("blob", &t.Blob.Service)
		switch t.Blob.Fault {
		case "", "forbidden", "corrupt", "stall", "truncate", "pause":
		default:
			v.fail("blob.fault", "want forbidden, corrupt, stall, truncate or pause (or nothing), got %q", t.Blob.Fault)
		}
	}
	v.mirrors(claim)
	for _, dn := range sortedKeys(t.DNS) {
		if d := t.DNS[dn]; d != nil {
			port := d.Port
			if port == 0 {
				port = 53
			}
			k := fmt.Sprintf("%s:%d", d.Host, port)
			if other, ok := used[k]; ok {
				v.fail("dns."+dn+".port", "host %s already runs %s on port %d", d.Host, other, port)
			}
			used[k] = "dns." + dn
		}
	}
}

func (v *validator) node() {
	n := v.t.Node
	if _, ok := v.t.Hosts[n.Host]; !ok {
		v.fail("node.host", "want the name of the host that plays the node, got %q", n.Host)
	}
	for i, ns := range n.Nameservers {
		if a, err := netip.ParseAddr(ns); err != nil || !plainAddr(a) {
			v.fail(fmt.Sprintf("node.nameservers[%d]", i), "want an IPv4 or IPv6 address, got %q", ns)
		}
	}
	for i, s := range n.Search {
		if !dnsNameRE.MatchString(s) {
			v.fail(fmt.Sprintf("node.search[%d]", i), "not a DNS name: %q", s)
		}
	}
	for i, line := range n.HostsEntries {
		fs := strings.Fields(line)
		if len(fs) < 2 {
			v.fail(fmt.Sprintf("node.hostsEntries[%d]", i), "want \"ADDRESS NAME...\", got %q", line)
			continue
		}
		if _, err := netip.ParseAddr(fs[0]); err != nil {
			v.fail(fmt.Sprintf("node.hostsEntries[%d]", i), "want an address first, got %q", fs[0])
		}
	}
	if c := n.Credentials; c != nil && (c.Username == "" || c.Password == "") {
		v.fail("node.credentials", "want username and password")
	}
	v.crio()
	v.containerdLayout()
	v.clusterLayouts()
	if c := n.CredentialProvider; c != nil && c.Fail == "" && (c.Username == "" || c.Password == "") {
		v.fail("node.credentialProvider", "want username and password (or fail: MESSAGE for a plugin that fails)")
	}
}

func (v *validator) probe() {
	p := v.t.Probe
	if p.Platform != "" && !platformRE.MatchString(p.Platform) {
		v.fail("probe.platform", "want OS/ARCH[/VARIANT] such as linux/arm64, got %q", p.Platform)
	}
	for i, a := range p.Args {
		if !strings.HasPrefix(a, "-") && (i == 0 || !strings.HasPrefix(p.Args[i-1], "--")) {
			v.fail(fmt.Sprintf("probe.args[%d]", i), "want probe flags such as --quick, got %q", a)
		}
	}
}

func (v *validator) expect() {
	e := v.t.Expect
	if e == nil {
		return
	}
	switch e.Status {
	case "", verdict.StatusOK, verdict.StatusFail:
	default:
		v.fail("expect.status", "want ok or fail, got %q", e.Status)
	}
	if e.Condition != "" {
		ok := false
		var names []string
		for _, c := range verdict.Conditions {
			names = append(names, string(c))
			ok = ok || c == e.Condition
		}
		if !ok {
			v.fail("expect.condition", "want one of %s, got %q", strings.Join(names, ", "), e.Condition)
		}
	}
	switch e.Stage {
	case "", verdict.StageReference, verdict.StageRegistry, verdict.StageAuth, verdict.StageBlob:
	default:
		v.fail("expect.stage", "want reference, registry, auth or blob, got %q", e.Stage)
	}
	switch e.Role {
	case "", verdict.RoleRegistry, verdict.RoleAuth, verdict.RoleBlob, verdict.RoleMirror:
	default:
		v.fail("expect.role", "want registry, auth, blob or mirror, got %q", e.Role)
	}
	if e.Code != "" {
		if _, ok := verdict.Lookup(e.Code); !ok {
			v.fail("expect.code", "unknown code %q (see docs/verdicts.md)", e.Code)
		}
	}
	if e.Cause != "" && !knownCause(e.Cause) {
		v.fail("expect.cause", "unknown cause %q", e.Cause)
	}
	for i, w := range e.Warnings {
		if _, ok := verdict.Lookup(w); !ok {
			v.fail(fmt.Sprintf("expect.warnings[%d]", i), "unknown code %q", w)
		}
	}
}

func knownCause(c verdict.Cause) bool {
	for _, i := range verdict.Codes {
		if i.Cause == c {
			return true
		}
	}
	return c == verdict.CauseOK
}
