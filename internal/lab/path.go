package lab

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/labsvc"
)

// The far side of the path (issue 38): vxlan tunnels with a lower MTU,
// rate-limited subnets, random loss and ICMP types in firewall rules,
// MSS clamping, and the SNI filter's relay. This kernel has no netem,
// WireGuard, GRE or IPIP: vxlan is its real encapsulating tunnel, tbf
// its rate limit, nftables' numgen its random loss.

// vxlanPort is the UDP port of the lab's vxlan tunnels (IANA's).
const vxlanPort = 4789

// tunnelLines are the ip batch lines that make host's tunnel ends: a
// vxlan link to the other end's underlay address, its MTU, its address.
// They come before the host's routes, which may go through them.
func tunnelLines(t *scenario.Scenario, host string) []string {
	var out []string
	for i, name := range sortedKeys(t.Tunnels) {
		tn := t.Tunnels[name]
		addr, ok := tn.Ends[host]
		if !ok {
			continue
		}
		local, _ := t.AddrOn(host, tn.Underlay)
		var remote netip.Addr
		for other := range tn.Ends {
			if other != host {
				remote, _ = t.AddrOn(other, tn.Underlay)
			}
		}
		dev := fmt.Sprintf("vx%d", i)
		out = append(out,
			fmt.Sprintf("link add %s type vxlan id %d local %s remote %s dstport %d", dev, 100+i, local, remote, vxlanPort),
			fmt.Sprintf("link set %s mtu %d", dev, tn.EffectiveMTU()),
			fmt.Sprintf("addr add %s/%d dev %s", addr, tn.Prefix().Bits(), dev),
			"link set "+dev+" up")
	}
	return out
}

// shape puts a token bucket (tc tbf) on the bridge of every subnet host
// routes that has a rate: what the router sends into the subnet is
// limited to it.
func shape(ctx context.Context, t *scenario.Scenario, ns, host string, bridgeOf map[string]string) error {
	for _, sn := range t.RoutedSubnets(host) {
		s := t.Subnets[sn]
		if s.Rate == "" {
			continue
		}
		// burst: 10 ms at the rate, at least a few full packets; a
		// queue of up to 200 ms, as a link's buffer
		if _, err := run(ctx, "", "tc", "-n", ns, "qdisc", "add", "dev", bridgeOf[sn], "root", "tbf",
			"rate", s.Rate, "burst", "16kb", "latency", "200ms"); err != nil {
			return fmt.Errorf("rate of subnet %s: %v", sn, err)
		}
	}
	return nil
}

// nftICMPType matches one ICMP type (frag-needed: destination
// unreachable, code 4).
func nftICMPType(typ string) string {
	if typ == "frag-needed" {
		return "icmp type destination-unreachable icmp code frag-needed"
	}
	return "icmp type " + typ
}

// nftPathMatch is what a rule's percent and clamp-mss action add to its
// matches.
func nftPathMatch(r scenario.Rule) []string {
	var m []string
	if r.Action == "clamp-mss" {
		m = append(m, "tcp flags syn")
	}
	if r.Percent > 0 {
		m = append(m, fmt.Sprintf("numgen random mod 100 < %d", r.Percent))
	}
	return m
}

// nftClampMSS rewrites a forwarded SYN's MSS to fit the route it leaves
// by (the tunnel's MTU less 40), as MSS clamping on a VPN gateway does.
const nftClampMSS = "tcp option maxseg size set rt mtu"

// sniFilterRuleset sends the TCP connections host forwards to the filter's
// port into its relay (a dnat to the host's own address), in the lab's
// table: "" when the host has no filter.
func sniFilterRuleset(t *scenario.Scenario, host string) string {
	h := t.Hosts[host]
	if h == nil || h.SNIFilter == nil {
		return ""
	}
	f := h.SNIFilter
	addrs := t.HostAddrs(host)
	if len(addrs) == 0 {
		return ""
	}
	var own []string
	for _, a := range addrs {
		own = append(own, a.String())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "table inet %s {\n\tchain sni-filter {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n", nftTable)
	fmt.Fprintf(&b, "\t\tip daddr != { %s } tcp dport %d counter dnat ip to %s:%d comment \"SNI filter\"\n", strings.Join(own, ", "), f.EffectivePort(), addrs[0], f.EffectiveListenPort())
	b.WriteString("\t}\n}\n")
	return b.String()
}

// sniFilterServe is the filter's relay for host's serve config.
func sniFilterServe(t *scenario.Scenario, host string) *labsvc.SNIFilterConfig {
	h := t.Hosts[host]
	if h == nil || h.SNIFilter == nil {
		return nil
	}
	addrs := t.HostAddrs(host)
	return &labsvc.SNIFilterConfig{
		Listen: netip.AddrPortFrom(addrs[0], uint16(h.SNIFilter.EffectiveListenPort())).String(),
		Block:  h.SNIFilter.Block,
	}
}

// preparePath adds the SNI filters' relays to their hosts' serve configs.
func preparePath(t *scenario.Scenario, cfg func(host string) *ServeConfig) {
	for _, h := range sortedKeys(t.Hosts) {
		if c := sniFilterServe(t, h); c != nil {
			cfg(h).SNIFilter = c
		}
	}
}
