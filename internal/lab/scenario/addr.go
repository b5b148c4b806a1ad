package scenario

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"strconv"
)

// The lab's stand-in for the internet: the two documentation ranges, which
// nothing outside a lab ever routes.
var internetPrefixes = []netip.Prefix{
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
}

// GatewayAddr returns the subnet's gateway address (default: first address).
func (s *Subnet) GatewayAddr() netip.Addr {
	if s.Gateway != "" {
		if a, err := netip.ParseAddr(s.Gateway); err == nil {
			return a
		}
	}
	return s.Prefix().Masked().Addr().Next()
}

// Prefix is the subnet's CIDR, masked.
func (s *Subnet) Prefix() netip.Prefix {
	p, _ := netip.ParsePrefix(s.CIDR)
	return p.Masked()
}

// ParseDest parses a route or rule destination: an IPv4 or IPv6 CIDR or
// address, or "internet" (IPv4: the lab's two documentation ranges).
func ParseDest(s string) ([]netip.Prefix, error) {
	if s == "internet" {
		return internetPrefixes, nil
	}
	if s == "default" {
		return nil, fmt.Errorf("default routes are refused in the lab: use \"internet\" for the lab's stand-in for the internet")
	}
	if p, err := netip.ParsePrefix(s); err == nil && plainAddr(p.Addr()) {
		if p.Bits() == 0 {
			return nil, fmt.Errorf("default routes are refused in the lab (0.0.0.0/0 and ::/0 alike): use \"internet\" for the lab's stand-in for the internet, or a prefix")
		}
		return []netip.Prefix{p.Masked()}, nil
	}
	if a, err := netip.ParseAddr(s); err == nil && plainAddr(a) {
		return []netip.Prefix{netip.PrefixFrom(a, a.BitLen())}, nil
	}
	return nil, fmt.Errorf("want an IPv4 or IPv6 CIDR, an address or \"internet\", got %q", s)
}

// RoutedSubnets lists the subnets a host routes (owns the bridge of).
func (t *Scenario) RoutedSubnets(host string) []string {
	var out []string
	for _, sn := range sortedKeys(t.Subnets) {
		if s := t.Subnets[sn]; s != nil && s.Router == host {
			out = append(out, sn)
		}
	}
	return out
}

// EffectivePort is the service's port, defaulting by TLS mode.
func (s *Service) EffectivePort() int {
	if s.Port != 0 {
		return s.Port
	}
	if s.TLS == "none" {
		return 80
	}
	return 443
}

// HostAddrs lists a host's addresses: its interface addresses (by subnet
// name), then the gateways of the subnets it routes.
func (t *Scenario) HostAddrs(host string) []netip.Addr {
	var out []netip.Addr
	h := t.Hosts[host]
	if h != nil {
		for _, sn := range sortedKeys(h.Interfaces) {
			if a, err := netip.ParseAddr(h.Interfaces[sn]); err == nil {
				out = append(out, a)
			}
		}
	}
	for _, sn := range t.RoutedSubnets(host) {
		out = append(out, t.Subnets[sn].GatewayAddr())
	}
	return out
}

// ListenAddr is the address a service listens on: its address: field or
// the host's first address.
func (t *Scenario) ListenAddr(host, address string, port int) (string, error) {
	addrs := t.HostAddrs(host)
	if address != "" {
		a, err := netip.ParseAddr(address)
		if err == nil {
			for _, x := range addrs {
				if x == a {
					return netip.AddrPortFrom(a, uint16(port)).String(), nil
				}
			}
		}
		return "", fmt.Errorf("address %q is not an address of host %s (%v)", address, host, addrs)
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("host %s has no address to listen on", host)
	}
	return netip.AddrPortFrom(addrs[0], uint16(port)).String(), nil
}

// BaseURL is scheme://NAME[:PORT] of a service.
func (s *Service) BaseURL() string {
	scheme, def := "https", 443
	if s.TLS == "none" {
		scheme, def = "http", 80
	}
	if p := s.EffectivePort(); p != def {
		return scheme + "://" + s.Name + ":" + strconv.Itoa(p)
	}
	return scheme + "://" + s.Name
}

// Seed is a deterministic seed from a name: the same scenario always makes
// the same image bytes and instance ids.
func Seed(s string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64() & 0x7fffffffffffffff)
}

// ProbeImage is the image reference the probe pulls.
func (t *Scenario) ProbeImage() string {
	if t.Probe.Image != "" {
		return t.Probe.Image
	}
	if t.Registry == nil {
		return ""
	}
	host := t.Registry.Name
	if p := t.Registry.EffectivePort(); p != 443 && !(p == 80 && t.Registry.TLS == "none") {
		host = fmt.Sprintf("%s:%d", host, p)
	}
	return host + "/" + t.Registry.Image.Repository + ":" + t.Registry.Image.Tag
}

// RegistryKey is the registry as the node's credentials name it: the host,
// with its port unless 443.
func (t *Scenario) RegistryKey() string {
	reg := t.Registry
	if reg.EffectivePort() != 443 {
		return fmt.Sprintf("%s:%d", reg.Name, reg.EffectivePort())
	}
	return reg.Name
}
