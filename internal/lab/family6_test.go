package lab

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/testenv"
)

// TestBuildIPv6 builds the dual-stack test scenario: IPv6 is on in its
// namespaces with no default route of either family, an address is usable
// at once (no DAD), the node reaches the registry over each family through
// the router, and an ip6 firewall rule and an IPv6 blackhole route break
// IPv6 alone.
func TestBuildIPv6(t *testing.T) {
	testenv.RequireNetns(t, "nft")
	topo, err := scenario.LoadFile("scenario/testdata/valid-ipv6.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// the registry on a subnet of its own, so the node's path crosses gw
	topo.Subnets["reg6"] = &scenario.Subnet{CIDR: "fd00:0:0:60::/64", Router: "gw"}
	topo.Subnets["reg"] = &scenario.Subnet{CIDR: "192.168.60.0/24", Router: "gw"}
	topo.Hosts["registry"].Interfaces = map[string]string{"reg": "192.168.60.20", "reg6": "fd00:0:0:60::20"}
	topo.Hosts["registry"].Routes = []scenario.Route{{To: "192.168.50.0/24", Via: "192.168.60.1"}, {To: "fd00:0:0:50::/64", Via: "fd00:0:0:60::1"}}
	topo.Hosts["node"].Routes = []scenario.Route{{To: "192.168.60.0/24", Via: "192.168.50.1"}, {To: "fd00:0:0:60::/64", Via: "fd00:0:0:50::1"}}
	if err := topo.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if left := Leftovers(s.Prefix); len(left) > 0 {
			t.Errorf("Leftovers(%q) = %v, want none", s.Prefix, left)
		}
	}()
	n, err := Build(ctx, topo, s.Prefix)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if err := n.Verify(ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if err := n.WaitLinks(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := run(ctx, "", "ip", "-n", n.NS["node"], "-6", "addr", "show", "dev", "eth1")
	if err != nil || !strings.Contains(string(out), "fd00:0:0:50::10/64") || strings.Contains(string(out), "tentative") {
		t.Errorf("node's eth1 = %q, %v; want fd00:0:0:50::10/64, not tentative", out, err)
	}
	for _, k := range []string{"disable_ipv6", "accept_ra", "accept_dad"} {
		b, err := run(ctx, "", "ip", "netns", "exec", n.NS["node"], "cat", "/proc/sys/net/ipv6/conf/eth1/"+k)
		if err != nil || strings.TrimSpace(string(b)) != "0" {
			t.Errorf("node's eth1 %s = %q, %v, want 0", k, b, err)
		}
	}
	if out, err := run(ctx, "", "ip", "-n", n.NS["node"], "-6", "route", "get", "fd00:0:0:60::20"); err != nil || !strings.Contains(string(out), "via fd00:0:0:50::1") {
		t.Errorf("route get fd00:0:0:60::20 = %q, %v; want via fd00:0:0:50::1", out, err)
	}
	if _, err := run(ctx, "", "ip", "-n", n.NS["node"], "-6", "route", "get", "2001:db8::1"); err == nil {
		t.Errorf("node has an IPv6 route to 2001:db8::1; want none (no default route)")
	}
	var lns []interface{ Close() error }
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for _, a := range []string{"192.168.60.20:443", "[fd00:0:0:60::20]:443"} {
		l, err := listenIn(n.NS["registry"], a)
		if err != nil {
			t.Fatalf("listen in registry on %s: %v", a, err)
		}
		lns = append(lns, l)
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		if err := dialIn(n.NS["node"], a, 2*time.Second); err != nil {
			t.Errorf("dial %s from node: %v, want connected", a, err)
		}
	}
	// an ip6 rule rejects IPv6 alone
	rst := []scenario.Rule{{Action: "reject", To: "fd00:0:0:60::/64", Proto: "tcp", Port: 443}}
	if err := n.Firewall(ctx, "gw", rst); err != nil {
		t.Fatalf("Firewall(gw, reject IPv6): %v", err)
	}
	if err := dialIn(n.NS["node"], "[fd00:0:0:60::20]:443", 2*time.Second); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("dial [fd00:0:0:60::20]:443 behind the ip6 reject rule: %v, want connection refused", err)
	}
	if err := dialIn(n.NS["node"], "192.168.60.20:443", 2*time.Second); err != nil {
		t.Errorf("dial 192.168.60.20:443 beside the ip6 reject rule: %v, want connected", err)
	}
	if err := n.Firewall(ctx, "gw", nil); err != nil {
		t.Fatal(err)
	}
	// an IPv6 blackhole route on the router: the node's IPv6 SYN vanishes
	if err := n.Route(ctx, "gw", "add", scenario.Route{To: "fd00:0:0:60::20", Type: "blackhole"}); err != nil {
		t.Fatalf("Route(gw, blackhole fd00:0:0:60::20): %v", err)
	}
	if err := dialIn(n.NS["node"], "[fd00:0:0:60::20]:443", 500*time.Millisecond); err == nil {
		t.Errorf("dial [fd00:0:0:60::20]:443 past the router's blackhole route = connected, want a failure")
	}
	if err := dialIn(n.NS["node"], "192.168.60.20:443", 2*time.Second); err != nil {
		t.Errorf("dial 192.168.60.20:443 beside the IPv6 blackhole: %v, want connected", err)
	}
	// an IPv4 scenario's namespaces keep IPv6 off
	if got := sysctls(false, false); !strings.Contains(strings.Join(got, " "), "net.ipv6.conf.all.disable_ipv6=1") {
		t.Errorf("sysctls(IPv4 scenario) = %v, want disable_ipv6=1", got)
	}
}

func TestNftRuleset6(t *testing.T) {
	got := nftRule(scenario.Rule{Action: "drop", From: "fd00:0:0:50::/64", To: "fd00:0:0:60::20", Proto: "tcp", Port: 443})
	if want := "ip6 saddr fd00:0:0:50::/64 ip6 daddr fd00:0:0:60::20 tcp dport 443 counter drop"; got != want {
		t.Errorf("nftRule(IPv6) = %q, want %q", got, want)
	}
	got = nftRule(scenario.Rule{Action: "reject", To: "10.0.0.9"})
	if want := "ip daddr 10.0.0.9 counter reject"; got != want {
		t.Errorf("nftRule(IPv4) = %q, want %q", got, want)
	}
}
