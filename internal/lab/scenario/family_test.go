package scenario

import (
	"net/netip"
	"strings"
	"testing"
)

func TestLoadIPv6(t *testing.T) {
	d, err := LoadFile("testdata/valid-ipv6.yaml")
	if err != nil {
		t.Fatalf("LoadFile(valid-ipv6) = %v", err)
	}
	if !d.UsesIPv6() {
		t.Errorf("UsesIPv6() = false for a scenario with subnet %s", d.Subnets["lan6"].CIDR)
	}
	m, err := LoadFile("testdata/valid-minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if m.UsesIPv6() {
		t.Errorf("UsesIPv6() = true for the IPv4-only minimal scenario")
	}
	if got, want := d.Subnets["lan6"].GatewayAddr(), netip.MustParseAddr("fd00:0:0:50::1"); got != want {
		t.Errorf("GatewayAddr() = %s, want %s", got, want)
	}
	// a dual-stack host's TCP services listen on one address of each family
	got, err := d.ListenAddrs("registry", "", 443)
	if want := "192.168.50.20:443,[fd00:0:0:50::20]:443"; err != nil || got != want {
		t.Errorf("ListenAddrs(registry) = %q, %v, want %q", got, err, want)
	}
	// an explicit address is the only one; an IPv4-only host has one
	got, err = d.ListenAddrs("registry", "fd00:0:0:50::20", 5000)
	if want := "[fd00:0:0:50::20]:5000"; err != nil || got != want {
		t.Errorf("ListenAddrs(registry, its IPv6 address) = %q, %v, want %q", got, err, want)
	}
	got, err = m.ListenAddrs("registry", "", 443)
	if want := "192.168.50.20:443"; err != nil || got != want {
		t.Errorf("ListenAddrs(IPv4-only registry) = %q, %v, want %q", got, err, want)
	}
	got, err = d.ListenAddr("gw", "fd00:0:0:50::1", 53)
	if want := "[fd00:0:0:50::1]:53"; err != nil || got != want {
		t.Errorf("ListenAddr(gw's IPv6 gateway) = %q, %v, want %q", got, err, want)
	}
}

func TestParseDestFamilies(t *testing.T) {
	for _, tt := range []struct {
		in, want string // want "" for an error
	}{
		{"fd00:0:0:1::/64", "fd00:0:0:1::/64"},
		{"fd00:0:0:1::5/64", "fd00:0:0:1::/64"},
		{"64:ff9b::/96", "64:ff9b::/96"},
		{"fd00::20", "fd00::20/128"},
		{"10.0.0.9", "10.0.0.9/32"},
		{"::/0", ""},
		{"0.0.0.0/0", ""},
		{"::ffff:10.0.0.1", ""},
		{"fe80::1%eth0", ""},
	} {
		ps, err := ParseDest(tt.in)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("ParseDest(%q) = %v, want an error", tt.in, ps)
		case tt.want != "" && (err != nil || len(ps) != 1 || ps[0].String() != tt.want):
			t.Errorf("ParseDest(%q) = %v, %v, want %s", tt.in, ps, err, tt.want)
		}
	}
}

// TestClusterIPv6Node: an IPv6-only node host registers its IPv6 address,
// reaches the apiserver at the control plane's IPv6 address, takes an IPv6
// pod range, and is named by its instance (an IPv6 address has no ip-name).
func TestClusterIPv6Node(t *testing.T) {
	s, err := Load("cluster-ipv6-only-pool")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.NodeIP("node-b"), netip.MustParseAddr("2001:db8:0:2::10"); got != want {
		t.Errorf("NodeIP(node-b) = %s, want %s", got, want)
	}
	if got, want := s.NodeIP("node-a"), netip.MustParseAddr("10.0.1.10"); got != want {
		t.Errorf("NodeIP(node-a) = %s, want %s", got, want)
	}
	if got, want := s.APIServerAddr(s.NodeIP("node-b")), netip.MustParseAddr("2001:db8:0:30::10"); got != want {
		t.Errorf("APIServerAddr(IPv6) = %s, want %s", got, want)
	}
	if got, want := s.APIServerAddr(s.NodeIP("node-a")), netip.MustParseAddr("10.0.30.10"); got != want {
		t.Errorf("APIServerAddr(IPv4) = %s, want %s", got, want)
	}
	if got, want := s.Cluster.NodePodCIDR6(1).String(), "fd00:10:244:1::/64"; got != want {
		t.Errorf("NodePodCIDR6(1) = %s, want %s", got, want)
	}
	name := s.NodeName("node-b")
	if !strings.HasPrefix(name, "i-0") || !strings.HasSuffix(name, ".ap-northeast-2.compute.internal") || !strings.Contains(s.ProviderID("node-b"), strings.TrimSuffix(name, ".ap-northeast-2.compute.internal")) {
		t.Errorf("NodeName(node-b) = %q (providerID %s), want the instance's name i-0....ap-northeast-2.compute.internal", name, s.ProviderID("node-b"))
	}
	if got, want := s.NodeName("node-a"), "ip-10-0-1-10.ap-northeast-2.compute.internal"; got != want {
		t.Errorf("NodeName(node-a) = %q, want %q", got, want)
	}
}
