package addrscope

import (
	"net/netip"
	"testing"
)

func TestOf(t *testing.T) {
	tests := []struct {
		ip   string
		want string
	}{
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"172.32.0.1", "public"},
		{"192.168.1.1", "private"},
		{"fd00::1", "private"},
		{"fc00::1", "private"},
		{"100.64.0.1", "cgnat"},
		{"100.127.255.254", "cgnat"},
		{"100.128.0.1", "public"},
		{"127.0.0.1", "loopback"},
		{"127.9.9.9", "loopback"},
		{"::1", "loopback"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"198.51.100.7", "public"},
		{"203.0.113.9", "public"},
		{"2001:db8::1", "documentation"},
		{"2001:db8:61:10::20", "documentation"},
		{"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "documentation"},
		{"2001:db9::1", "public"},
		{"2001:db7:ffff::1", "public"},
		{"52.95.110.1", "public"},
		{"2600:1f18::1", "public"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:203.0.113.1", "public"},
		{"0.0.0.0", "other"},
		{"::", "other"},
		{"224.0.0.1", "other"},
		{"ff02::1", "other"},
		{"255.255.255.255", "other"},
		{"0.1.2.3", "other"},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			if got := Of(netip.MustParseAddr(tt.ip)); got != tt.want {
				t.Errorf("Of(%s) = %q, want %q", tt.ip, got, tt.want)
			}
		})
	}
	if got := Of(netip.Addr{}); got != "other" {
		t.Errorf("Of(zero Addr) = %q, want %q", got, "other")
	}
}

func TestHost(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.20.10:443":        "10.0.20.10",
		"[fd00::1]:443":         "fd00::1",
		"10.0.20.10":            "10.0.20.10",
		"fd00::1":               "fd00::1",
		"":                      "",
		"registry.example:5000": "registry.example",
	} {
		if got := Host(in); got != want {
			t.Errorf("Host(%q) = %q, want %q", in, got, want)
		}
	}
}
