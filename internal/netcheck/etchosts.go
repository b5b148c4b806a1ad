package netcheck

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strings"
)

// hostsFile maps a lower-case name (no trailing dot) to its addresses, in
// file order.
type hostsFile map[string][]netip.Addr

// readHosts reads and parses the hosts file at path. Lines that are not
// "ADDRESS NAME..." come back as warnings, one a line, naming it.
func readHosts(path string) (hostsFile, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("hosts file %s: %w", path, pathErr(err))
	}
	defer f.Close()
	return parseHosts(f, path)
}

// parseHosts parses a hosts file: "ADDRESS NAME [ALIAS...]" per line, IPv4
// or IPv6, '#' starts a comment. Names are case-insensitive; a name on
// several lines collects every address, as glibc's getaddrinfo does. A
// line whose first field is not an address, or that has no name, is
// skipped, as glibc (nss_files) and Go (net/hosts.go readHosts) skip it:
// one junk line does not stop the node resolving; the warning names it.
func parseHosts(r io.Reader, name string) (hostsFile, []string, error) {
	h := hostsFile{}
	var warnings []string
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		ip, err := netip.ParseAddr(f[0])
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("hosts file %s: line %d skipped: %q is not an IP address", name, n, truncField(f[0])))
			continue
		}
		if len(f) < 2 {
			warnings = append(warnings, fmt.Sprintf("hosts file %s: line %d skipped: address %s has no host name", name, n, ip))
			continue
		}
		for _, host := range f[1:] {
			host = hostKey(host)
			if host == "" || strings.HasSuffix(host, ".") {
				continue // "." or "..": no name a lookup can ask for
			}
			if !slices.Contains(h[host], ip) {
				h[host] = append(h[host], ip)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("hosts file %s: %w", name, err)
	}
	return h, warnings, nil
}

func truncField(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// lookup returns the addresses the hosts file gives name, if any.
func (h hostsFile) lookup(name string) []netip.Addr {
	return h[hostKey(name)]
}

// hostKey folds name for lookup: DNS names compare case-insensitively in
// ASCII only, and a trailing dot changes nothing.
func hostKey(name string) string {
	b := []byte(strings.TrimSuffix(name, "."))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}
