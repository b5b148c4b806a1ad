package netcheck

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Address families as reports name them.
const (
	FamilyIPv4 = "ipv4"
	FamilyIPv6 = "ipv6"
)

// FallbackDelay is how long Go's net.Dialer waits on the first family
// before it races the other one (Happy Eyeballs, RFC 6555): the default of
// net.Dialer.FallbackDelay, which containerd's registry transport also sets
// explicitly.
const FallbackDelay = 300 * time.Millisecond

// FamilyOf names the family of an address (an IPv4-mapped IPv6 address is
// IPv4, as Go dials it).
func FamilyOf(a netip.Addr) string {
	if a.Unmap().Is4() {
		return FamilyIPv4
	}
	return FamilyIPv6
}

// Families reads one endpoint's path per address family, after ConnectAll:
//
//  1. The host's answers, counted per family, with the best connect result
//     of each family from results.
//  2. The node per family: a usable address of its own, a default route,
//     and the source address the kernel picks for the host's first address
//     of the family (a UDP connect, which sends nothing: how Go's RFC 6724
//     sort asks it).
//  3. When some address connected and the name came from DNS, one dial of
//     the name by Go's own resolver and dialer, fed the node's answers: the
//     order Go sorts them in, the family it tries first, and whether it
//     had to fall back.
//  4. The finding: no address in a family the node can use, or one family
//     broken while the other works.
func (c *Checker) Families(ctx context.Context, res *report.Resolution, results []report.AddrResult, port int) *report.Families {
	if res == nil || len(res.Answers) == 0 {
		return nil
	}
	f := &report.Families{}
	paths := map[string]*report.FamilyPath{FamilyIPv4: &f.IPv4, FamilyIPv6: &f.IPv6}
	first := map[string]netip.Addr{}
	var addrs []netip.Addr
	for i, a := range res.Answers {
		ip, err := netip.ParseAddr(a.Address)
		if err != nil {
			continue
		}
		ip = ip.Unmap()
		addrs = append(addrs, ip)
		fam := FamilyOf(ip)
		p := paths[fam]
		p.HostAddresses++
		if _, ok := first[fam]; !ok {
			first[fam] = ip
		}
		if i < len(results) && p.Result != "ok" && (p.Result == "" || results[i].Result == "ok") {
			p.Result, p.Code = results[i].Result, results[i].Code
		}
	}
	// 2. The node, per family.
	for fam, p := range paths {
		p.NodeAddress = nodeAddress(fam)
		p.DefaultRoute = c.defaultRoute(fam)
		if dst, ok := first[fam]; ok {
			src, err := routeSource(dst, port)
			if err != nil {
				p.NoRoute = err.Error()
			} else {
				p.Source = src.String()
			}
		}
	}
	// 3. Go's order and dial, when there is something to dial.
	if res.Source != "literal" && (f.IPv4.Result == "ok" || f.IPv6.Result == "ok") {
		f.Order, f.Dial = c.goDial(ctx, res.Name, addrs, port)
	}
	// 4. The finding.
	f.Code, f.Detail = familyFinding(f)
	return f
}

// familyFinding names what the families say, if anything.
func familyFinding(f *report.Families) (verdict.Code, string) {
	v4, v6 := &f.IPv4, &f.IPv6
	// A family the node has no address of (and no route in) is not a
	// broken path: an IPv6-only node behind DNS64 sees the registry's A
	// record too, and an IPv4-only node a dual-stack registry's AAAA; Go's
	// dialer fails those at once and uses the other family at no cost.
	nodeHas := func(p *report.FamilyPath) bool { return p.NodeAddress != "" || p.Source != "" }
	switch {
	case v6.Result == "ok" && v4.HostAddresses > 0 && v4.Result != "ok" && nodeHas(v4):
		return verdict.IPv4PathBroken, fmt.Sprintf("IPv4 fails (%s) while IPv6 connects: pulls work over IPv6 only", v4.Result)
	case v4.Result == "ok" && v6.HostAddresses > 0 && v6.Result != "ok" && nodeHas(v6):
		d := fmt.Sprintf("IPv6 fails (%s) while IPv4 connects", v6.Result)
		switch dl := f.Dial; {
		case dl == nil || !dl.FellBack:
		case dl.DurationMS < dl.FallbackDelayMS:
			d += fmt.Sprintf("; Go's dialer (containerd, the kubelet) tried IPv6 first and fell back to IPv4 at once, in %.1f ms, because IPv6 failed at once: an IPv6 path that drops instead costs the %.0f ms fallback delay on every new connection", dl.DurationMS, dl.FallbackDelayMS)
		default:
			d += fmt.Sprintf("; Go's dialer (containerd, the kubelet) tried IPv6 first and fell back to IPv4 after %.0f ms: the %.0f ms fallback delay, paid on every new connection", dl.DurationMS, dl.FallbackDelayMS)
		}
		return verdict.IPv6PathBroken, d
	case v4.Result == "ok" || v6.Result == "ok":
		return "", ""
	}
	var has, usable []string
	for _, x := range []struct {
		fam string
		p   *report.FamilyPath
	}{{"IPv4", v4}, {"IPv6", v6}} {
		if x.p.HostAddresses == 0 {
			continue
		}
		has = append(has, x.fam)
		// A node with an address of the family but no route to this host
		// has a route problem (CONNECT_UNREACHABLE), not a family one.
		if x.p.Source != "" || x.p.NodeAddress != "" {
			usable = append(usable, x.fam)
		}
	}
	if len(has) == 0 || len(usable) > 0 {
		return "", ""
	}
	node := "has no route to any of them"
	switch {
	case v6.NodeAddress != "" && v4.NodeAddress == "":
		node = "is IPv6-only"
	case v4.NodeAddress != "" && v6.NodeAddress == "":
		node = "is IPv4-only"
	}
	return verdict.AddressFamilyUnusable, fmt.Sprintf("the host has only %s addresses and the node %s", strings.Join(has, " and "), node)
}

// routeSource asks the kernel which source address it would use for dst:
// a UDP connect sends no packet. An error means no route.
func routeSource(dst netip.Addr, port int) (netip.Addr, error) {
	if port <= 0 || port > 65535 {
		port = 443
	}
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(dst, uint16(port))))
	if err != nil {
		var se *os.SyscallError
		if errors.As(err, &se) {
			return netip.Addr{}, se.Err
		}
		return netip.Addr{}, err
	}
	defer c.Close()
	src := c.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap()
	if src.IsLinkLocalUnicast() && !dst.IsLinkLocalUnicast() {
		return netip.Addr{}, fmt.Errorf("only a link-local source (%s) for %s", src, dst)
	}
	return src, nil
}

// nodeAddress returns the first address of family fam on an interface that
// is up and can reach past the link: global or unique-local for IPv6,
// anything but loopback and link-local for IPv4. "" when there is none.
func nodeAddress(fam string) string {
	ifs, err := net.Interfaces()
	if err != nil {
		return ""
	}
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			pfx, err := netip.ParsePrefix(a.String())
			if err != nil {
				continue
			}
			ip := pfx.Addr().Unmap()
			if FamilyOf(ip) == fam && ip.IsGlobalUnicast() { // global unicast includes ULA and RFC 1918
				return ip.String()
			}
		}
	}
	return ""
}

// defaultRoute says whether the node's route tables hold a default route
// of family fam that is not a reject route (/proc/net/route,
// /proc/net/ipv6_route).
func (c *Checker) defaultRoute(fam string) bool {
	dir := c.cfg.ProcNet
	if dir == "" {
		dir = "/proc/thread-self/net" // this thread's network namespace, as the dials'
	}
	if fam == FamilyIPv4 {
		return hasDefaultRoute(filepath.Join(dir, "route"), fam)
	}
	return hasDefaultRoute(filepath.Join(dir, "ipv6_route"), fam)
}

// rtfUp and rtfReject are the route flags of linux/route.h.
const (
	rtfUp     = 0x0001
	rtfReject = 0x0200
)

// hasDefaultRoute reads one of the kernel's route files:
//
//	route:      Iface Destination Gateway Flags RefCnt Use Metric Mask ...  (hex, little-endian)
//	ipv6_route: dst dst_len src src_len nexthop metric refcnt use flags iface
func hasDefaultRoute(file, fam string) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		var dst, plen, flags string
		switch {
		case fam == FamilyIPv4 && len(fs) >= 8:
			dst, plen, flags = fs[1], fs[7], fs[3]
			if dst != "00000000" || plen != "00000000" {
				continue
			}
		case fam == FamilyIPv6 && len(fs) >= 10:
			dst, plen, flags = fs[0], fs[1], fs[8]
			if dst != strings.Repeat("0", 32) || plen != "00" || fs[9] == "lo" {
				continue
			}
		default:
			continue
		}
		fl, err := strconv.ParseUint(flags, 16, 32)
		if err == nil && fl&rtfUp != 0 && fl&rtfReject == 0 {
			return true
		}
	}
	return false
}

// goDial dials name as Go's net.Dialer does with a hostname, its resolver
// fed the node's answers through an in-memory DNS server (so the order is
// Go's own RFC 6724 sort, and the dial Go's own Happy Eyeballs). It
// returns the sorted order and what the dial did.
func (c *Checker) goDial(ctx context.Context, name string, addrs []netip.Addr, port int) ([]string, *report.FamilyDial) {
	fqdn := dns.Fqdn(name)
	r := &net.Resolver{PreferGo: true, StrictErrors: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		client, server := net.Pipe()
		go serveAnswers(server, fqdn, addrs)
		return client, nil
	}}
	d := &report.FamilyDial{FallbackDelayMS: units.MS(FallbackDelay)}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ConnectTimeout+c.cfg.DNSTimeout)
	defer cancel()
	sorted, err := r.LookupNetIP(ctx, "ip", fqdn)
	if err != nil || len(sorted) == 0 {
		d.Error = fmt.Sprintf("Go's resolver, fed the node's answers: %v", err)
		return nil, d
	}
	order := make([]string, len(sorted))
	for i, a := range sorted {
		order[i] = a.Unmap().String()
	}
	d.Primary = FamilyOf(sorted[0])
	dialer := &net.Dialer{Timeout: c.cfg.ConnectTimeout, FallbackDelay: FallbackDelay, Resolver: r}
	start := time.Now()
	conn, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(fqdn, strconv.Itoa(port)))
	d.DurationMS = units.MS(time.Since(start))
	if err != nil {
		d.Error = err.Error()
		return order, d
	}
	defer conn.Close()
	ap := conn.RemoteAddr().(*net.TCPAddr).AddrPort()
	d.Address, d.Family = net.JoinHostPort(ap.Addr().Unmap().String(), strconv.Itoa(int(ap.Port()))), FamilyOf(ap.Addr())
	d.FellBack = d.Family != d.Primary
	return order, d
}

// serveAnswers answers DNS queries over one stream connection (Go's
// resolver frames messages with a length prefix on anything that is not a
// PacketConn) from addrs: A and AAAA for fqdn, NXDOMAIN for any other name.
func serveAnswers(conn net.Conn, fqdn string, addrs []netip.Addr) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	dc := &dns.Conn{Conn: conn}
	for {
		q, err := dc.ReadMsg()
		if err != nil || len(q.Question) != 1 {
			return
		}
		m := new(dns.Msg)
		m.SetReply(q)
		qs := q.Question[0]
		if !strings.EqualFold(qs.Name, fqdn) {
			m.Rcode = dns.RcodeNameError
		}
		for _, a := range addrs {
			if m.Rcode != dns.RcodeSuccess {
				break
			}
			hdr := dns.RR_Header{Name: qs.Name, Class: dns.ClassINET, Ttl: 30}
			switch {
			case qs.Qtype == dns.TypeA && a.Is4():
				hdr.Rrtype = dns.TypeA
				m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: a.AsSlice()})
			case qs.Qtype == dns.TypeAAAA && a.Is6():
				hdr.Rrtype = dns.TypeAAAA
				m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: a.AsSlice()})
			}
		}
		if err := dc.WriteMsg(m); err != nil {
			return
		}
	}
}
