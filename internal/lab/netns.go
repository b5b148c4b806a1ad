package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/units"
)

// Paths used by `ip netns` (iproute2).
var (
	netnsRunDir = "/var/run/netns"
	netnsEtcDir = "/etc/netns"
)

// Network is a built scenario network: one namespace per host, named PREFIX+HOST.
type Network struct {
	Prefix   string
	Scenario *scenario.Scenario
	// NS maps a host name to its namespace name.
	NS map[string]string
	// VethEnds is the number of veth ends the network creates (two per
	// host interface); Verify checks all of them sit in lab namespaces.
	VethEnds int
	Timings  map[string]time.Duration
}

// sortedKeys lists a map's keys in order: every lab step walks hosts,
// subnets and links in one fixed order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// NetnsPath is the file `ip netns` keeps namespace ns under (what nsenter
// --net= and setns(2) open).
func NetnsPath(ns string) string { return filepath.Join(netnsRunDir, ns) }

// Namespace returns the namespace name of a host.
func (n *Network) Namespace(host string) string { return n.Prefix + host }

// CleanEnv is the environment every lab child gets: a fixed PATH and the C
// locale, nothing of the caller's.
func CleanEnv() []string {
	return []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
}

// run runs a command with a timeout and returns a one-line error with its
// output on failure.
func run(ctx context.Context, stdin string, argv ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = CleanEnv()
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		msg := units.OneLine(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.Bytes(), fmt.Errorf("%s: %s", strings.Join(argv[:min(len(argv), 4)], " "), msg)
	}
	return out.Bytes(), nil
}

// ipBatch runs iproute2 commands in one process (-batch), in namespace ns
// ("" for the machine's namespace: only netns and veth creation go there).
func ipBatch(ctx context.Context, ns string, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	argv := []string{"ip"}
	if ns != "" {
		argv = append(argv, "-n", ns)
	}
	argv = append(argv, "-batch", "-")
	_, err := run(ctx, strings.Join(lines, "\n")+"\n", argv...)
	return err
}

// parallel runs f for every item, at most 4 at a time, and returns the first
// error.
func parallel(items []string, f func(string) error) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	sem := make(chan struct{}, 4)
	for _, it := range items {
		wg.Add(1)
		sem <- struct{}{}
		go func(it string) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(it); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}(it)
	}
	wg.Wait()
	return first
}

// link is one veth pair: the host's end (named in the host) and the
// router's end (a port of the subnet's bridge).
type link struct {
	host, hostIf     string
	router, routerIf string
	subnet, bridge   string
	addr             netip.Addr
	bits             int
}

type plan struct {
	links    []link
	bridges  map[string][]string // router -> batch lines creating its bridges
	bridgeOf map[string]string   // subnet -> its bridge's name
}

func planOf(t *scenario.Scenario) plan {
	p := plan{bridges: map[string][]string{}, bridgeOf: map[string]string{}}
	bridgeOf := p.bridgeOf
	for i, sn := range sortedKeys(t.Subnets) {
		s := t.Subnets[sn]
		br := fmt.Sprintf("br%d", i)
		bridgeOf[sn] = br
		p.bridges[s.Router] = append(p.bridges[s.Router],
			"link add "+br+" type bridge"+bridgeOpts(s.Prefix()),
			fmt.Sprintf("addr add %s/%d dev %s%s", s.GatewayAddr(), s.Prefix().Bits(), br, addrOpts(s.Prefix().Addr())),
			"link set "+br+" up")
	}
	ports := map[string]int{}
	for _, hn := range sortedKeys(t.Hosts) {
		h := t.Hosts[hn]
		for i, sn := range sortedKeys(h.Interfaces) {
			s := t.Subnets[sn]
			a, _ := netip.ParseAddr(h.Interfaces[sn])
			p.links = append(p.links, link{
				host: hn, hostIf: fmt.Sprintf("eth%d", i),
				router: s.Router, routerIf: fmt.Sprintf("p%d", ports[s.Router]),
				subnet: sn, bridge: bridgeOf[sn],
				addr: a, bits: s.Prefix().Bits(),
			})
			ports[s.Router]++
		}
	}
	return p
}

// sysctls for every lab namespace: forwarding only on routers, no
// reverse-path filter (one-way routes must show as timeouts), no IPv6
// unless the scenario has an IPv6 subnet (then sysctls6, family6.go).
func sysctls(forward, ipv6 bool) []string {
	f := "0"
	if forward {
		f = "1"
	}
	if ipv6 {
		return append([]string{
			"net.ipv4.ip_forward=" + f,
			"net.ipv4.conf.all.rp_filter=0",
			"net.ipv4.conf.default.rp_filter=0",
			"net.ipv4.conf.all.send_redirects=0",
			"net.ipv4.conf.default.send_redirects=0",
		}, sysctls6(forward)...)
	}
	return []string{
		"net.ipv4.ip_forward=" + f,
		"net.ipv4.conf.all.rp_filter=0",
		"net.ipv4.conf.default.rp_filter=0",
		"net.ipv4.conf.all.send_redirects=0",
		"net.ipv4.conf.default.send_redirects=0",
		"net.ipv6.conf.all.disable_ipv6=1",
		"net.ipv6.conf.default.disable_ipv6=1",
	}
}

// Build creates the namespaces, links, addresses, routes and firewall rules
// of t under prefix. On error the caller tears down by prefix (Teardown).
func Build(ctx context.Context, t *scenario.Scenario, prefix string) (*Network, error) {
	if err := needLinux(); err != nil {
		return nil, err
	}
	n := &Network{Prefix: prefix, Scenario: t, NS: map[string]string{}, Timings: map[string]time.Duration{}}
	hosts := sortedKeys(t.Hosts)
	for _, h := range hosts {
		n.NS[h] = n.Namespace(h)
	}
	start := time.Now()
	// 1. namespaces, in one batch of the machine's ip.
	var lines []string
	for _, h := range hosts {
		lines = append(lines, "netns add "+n.NS[h])
	}
	if err := ipBatch(ctx, "", lines); err != nil {
		return n, fmt.Errorf("create namespaces: %v", err)
	}
	// 2. sysctls before any interface exists, so "default" applies to all.
	err := parallel(hosts, func(h string) error {
		fwd := t.Hosts[h].Forward || len(t.RoutedSubnets(h)) > 0 || t.IsNAT64Host(h)
		// written through /proc/sys (which shows the writer's namespace), so
		// no sysctl binary is needed
		var script strings.Builder
		for _, kv := range sysctls(fwd, t.UsesIPv6()) {
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(&script, "echo %s > /proc/sys/%s\n", v, strings.ReplaceAll(k, ".", "/"))
		}
		_, err := run(ctx, script.String(), "ip", "netns", "exec", n.NS[h], "sh", "-e")
		return err
	})
	if err != nil {
		return n, fmt.Errorf("sysctl: %v", err)
	}
	// 3. veth pairs, created directly between two lab namespaces: no end
	// ever exists in the machine's namespace.
	p := planOf(t)
	lines = lines[:0]
	for _, l := range p.links {
		lines = append(lines, fmt.Sprintf("link add %s netns %s type veth peer name %s netns %s",
			l.hostIf, n.NS[l.host], l.routerIf, n.NS[l.router]))
	}
	n.VethEnds = 2 * len(p.links)
	if err := ipBatch(ctx, "", lines); err != nil {
		return n, fmt.Errorf("create veth pairs: %v", err)
	}
	// 4. per namespace: lo, bridges, ports, addresses, routes.
	err = parallel(hosts, func(h string) error {
		b := []string{"link set lo up"}
		b = append(b, p.bridges[h]...)
		for _, l := range p.links {
			if l.router == h {
				b = append(b, "link set "+l.routerIf+" master "+l.bridge, "link set "+l.routerIf+" up")
			}
		}
		for _, l := range p.links {
			if l.host == h {
				b = append(b, fmt.Sprintf("addr add %s/%d dev %s%s", l.addr, l.bits, l.hostIf, addrOpts(l.addr)), "link set "+l.hostIf+" up")
			}
		}
		b = append(b, tunnelLines(t, h)...)
		for _, r := range t.Hosts[h].Routes {
			dests, _ := scenario.ParseDest(r.To)
			for _, d := range dests {
				if r.Type != "" {
					b = append(b, fmt.Sprintf("route add %s %s", r.Type, d))
				} else {
					b = append(b, fmt.Sprintf("route add %s via %s", d, r.Via))
				}
			}
		}
		if err := ipBatch(ctx, n.NS[h], b); err != nil {
			return fmt.Errorf("host %s: %v", h, err)
		}
		// 5. firewall: one nft table per namespace; shaping (path.go).
		if err := shape(ctx, t, n.NS[h], h, p.bridgeOf); err != nil {
			return fmt.Errorf("host %s: %v", h, err)
		}
		if rs := nftRuleset(t.Hosts[h].Firewall) + sniFilterRuleset(t, h); rs != "" {
			if _, err := run(ctx, rs, "ip", "netns", "exec", n.NS[h], "nft", "-f", "-"); err != nil {
				return fmt.Errorf("host %s firewall: %v", h, err)
			}
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	n.Timings["build"] = time.Since(start)
	return n, nil
}

// Verify asserts the two safety rules: every veth end the network made sits
// in a lab namespace (so none is in the machine's namespace), and no lab
// namespace has a default route. The lab refuses to run otherwise.
func (n *Network) Verify(ctx context.Context) error {
	total := 0
	for _, h := range sortedKeys(n.NS) {
		ns := n.NS[h]
		out, err := run(ctx, "", "ip", "-n", ns, "-j", "link", "show", "type", "veth")
		if err != nil {
			return fmt.Errorf("verify %s: %v", ns, err)
		}
		var links []json.RawMessage
		if len(bytes.TrimSpace(out)) > 0 {
			if err := json.Unmarshal(out, &links); err != nil {
				return fmt.Errorf("verify %s: unreadable `ip -j link` output", ns)
			}
		}
		total += len(links)
		for _, fam := range []string{"-4", "-6"} {
			out, err = run(ctx, "", "ip", "-n", ns, fam, "route", "show", "default")
			if err != nil {
				return fmt.Errorf("verify %s: %v", ns, err)
			}
			if s := strings.TrimSpace(string(out)); s != "" {
				return fmt.Errorf("refusing to run: namespace %s has a default route (%s)", ns, units.OneLine(s))
			}
		}
	}
	if total != n.VethEnds {
		return fmt.Errorf("refusing to run: %d veth ends in lab namespaces, want %d (an end may sit in the machine's namespace)", total, n.VethEnds)
	}
	return nil
}

// WaitLinks waits (at most 3s) until every link of every namespace is
// active: the kernel attaches a link's queueing discipline in deferred
// "linkwatch" work up to a second after the link comes up, and until then
// it drops every packet sent on it, which would show as a spurious 1s SYN
// retransmission in the first connect.
func (n *Network) WaitLinks(ctx context.Context) error {
	deadline := time.Now().Add(3 * time.Second)
	for _, h := range sortedKeys(n.NS) {
		for {
			out, err := run(ctx, "", "ip", "-n", n.NS[h], "-j", "link", "show", "up")
			if err != nil {
				return err
			}
			var links []struct {
				Name  string `json:"ifname"`
				Qdisc string `json:"qdisc"`
				Oper  string `json:"operstate"`
			}
			if err := json.Unmarshal(out, &links); err != nil {
				return fmt.Errorf("links of %s: unreadable `ip -j link` output", n.NS[h])
			}
			pending := ""
			for _, l := range links {
				veth := strings.HasPrefix(l.Name, "eth") || strings.HasPrefix(l.Name, "p")
				if veth && (l.Qdisc == "noop" || l.Oper != "UP") {
					pending = l.Name
				}
			}
			if pending == "" {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("link %s of %s is not active after 3s", pending, n.NS[h])
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(25 * time.Millisecond):
			}
		}
	}
	return nil
}

// WriteNodeFiles writes /etc/netns/NODE/{resolv.conf,hosts}, which `ip
// netns exec` bind-mounts over /etc for every process it starts in NODE.
func (n *Network) WriteNodeFiles() (dir string, err error) {
	t := n.Scenario
	dir = filepath.Join(netnsEtcDir, n.NS[t.Node.Host])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var rc strings.Builder
	rc.WriteString("# written by pullpath lab for " + t.Name + "\n")
	if len(t.Node.Search) > 0 {
		rc.WriteString("search " + strings.Join(t.Node.Search, " ") + "\n")
	}
	for _, s := range t.Node.Nameservers {
		rc.WriteString("nameserver " + s + "\n")
	}
	rc.WriteString("options timeout:1 attempts:1\n")
	hosts := "127.0.0.1 localhost\n"
	for _, l := range t.Node.HostsEntries {
		hosts += strings.Join(strings.Fields(l), " ") + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "resolv.conf"), []byte(rc.String()), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "hosts"), []byte(hosts), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}
