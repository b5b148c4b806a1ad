package netcheck

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// resolvConf is what the stub resolver of the node reads from resolv.conf.
type resolvConf struct {
	nameservers []string // ip:port, in file order
	search      []string // search list, without trailing dots
	ndots       int
	timeout     int // seconds; parsed for completeness, DNSTimeout is what is used
	attempts    int // parsed for completeness: pullpath never retries silently
}

// glibc's defaults and limits (resolv/resolv.h: MAXNS, RES_MAXNDOTS,
// RES_MAXRETRANS, RES_MAXRETRY); Go's resolver keeps the same ones.
const (
	maxNameservers = 3
	maxNdots       = 15
	maxTimeout     = 30
	maxAttempts    = 5
)

func defaultResolvConf() resolvConf {
	return resolvConf{ndots: 1, timeout: 5, attempts: 2}
}

// readResolvConf reads and parses the resolv.conf at path.
func readResolvConf(path string) (resolvConf, error) {
	f, err := os.Open(path)
	if err != nil {
		return resolvConf{}, fmt.Errorf("resolv.conf %s: %w", path, pathErr(err))
	}
	defer f.Close()
	return parseResolvConf(f, path)
}

// parseResolvConf parses resolv.conf the way glibc's res_init does: keywords
// nameserver, search, domain and options (ndots:N, timeout:N, attempts:N);
// comments start with '#' or ';'; the last of domain and search wins; only
// the first three nameservers count. Unknown keywords and options are
// ignored, as glibc ignores them; a value that cannot be what its keyword
// needs is an error naming the file and line.
func parseResolvConf(r io.Reader, name string) (resolvConf, error) {
	rc := defaultResolvConf()
	fail := func(line int, format string, args ...any) (resolvConf, error) {
		return resolvConf{}, fmt.Errorf("resolv.conf %s: line %d: %s", name, line, fmt.Sprintf(format, args...))
	}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexAny(line, "#;"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "nameserver":
			if len(f) < 2 {
				return fail(n, "nameserver needs an IP address")
			}
			ip, err := netip.ParseAddr(f[1])
			if err != nil {
				return fail(n, "nameserver %q is not an IP address", f[1])
			}
			if len(rc.nameservers) < maxNameservers {
				rc.nameservers = append(rc.nameservers, net.JoinHostPort(ip.String(), "53"))
			}
		case "domain":
			if len(f) < 2 {
				return fail(n, "domain needs a domain name")
			}
			rc.search = domains(f[1:2])
		case "search":
			if len(f) < 2 {
				return fail(n, "search needs at least one domain name")
			}
			rc.search = domains(f[1:])
		case "options":
			for _, o := range f[1:] {
				key, val, ok := strings.Cut(o, ":")
				var dst *int
				var limit int
				switch key {
				case "ndots":
					dst, limit = &rc.ndots, maxNdots
				case "timeout":
					dst, limit = &rc.timeout, maxTimeout
				case "attempts":
					dst, limit = &rc.attempts, maxAttempts
				default:
					continue // rotate, edns0, single-request, ...: no bearing on what is asked
				}
				v, err := strconv.Atoi(val)
				if !ok || err != nil || v < 0 {
					return fail(n, "option %q needs a whole number, as in %s:1", o, key)
				}
				*dst = min(v, limit)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return resolvConf{}, fmt.Errorf("resolv.conf %s: %w", name, err)
	}
	return rc, nil
}

// domains returns the search domains without trailing dots, dropping the
// root ("."), which adds nothing to a name.
func domains(ds []string) []string {
	var out []string
	for _, d := range ds {
		// The root (".") is skipped as Go's resolver skips it; a word with
		// an empty label ("..", ".a", "a..b") is no domain name, and Go's
		// resolver never finds a name under it (isDomainName).
		d = strings.TrimSuffix(d, ".")
		if d == "" || strings.HasPrefix(d, ".") || strings.HasSuffix(d, ".") || strings.Contains(d, "..") {
			continue
		}
		out = append(out, d)
	}
	return out
}

// parseNameserver reads HOST:PORT or HOST (port 53), HOST an IP address
// (IPv6 with or without brackets).
func parseNameserver(s string) (string, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.String(), nil
	}
	if ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")); err == nil {
		return net.JoinHostPort(ip.String(), "53"), nil
	}
	return "", fmt.Errorf("nameserver %q: want an IP address or IP:PORT", s)
}

// pathErr drops the path from an *fs.PathError, which the caller names
// already, so the message stays one short line.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("cannot %s: %w", pe.Op, pe.Err)
	}
	return err
}
