package netcheck

import (
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadResolvConf(t *testing.T) {
	tests := []struct {
		file string
		want resolvConf
	}{
		{"valid-resolv.conf", resolvConf{
			nameservers: []string{"10.0.0.2:53", "[fd00::53]:53", "[fe80::1%eth0]:53"}, // only the first three count
			search:      []string{"ec2.internal", "corp.example"},
			ndots:       2, timeout: 3, attempts: 4,
		}},
		{"valid-resolv-domain.conf", resolvConf{
			nameservers: []string{"127.0.0.53:53"},
			search:      []string{"Corp.Example"}, // the last of domain and search wins
			ndots:       maxNdots, timeout: maxTimeout, attempts: maxAttempts,
		}},
		{"valid-resolv-empty.conf", defaultResolvConf()},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := readResolvConf(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatalf("readResolvConf(%q) error: %v", tt.file, err)
			}
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(resolvConf{})); d != "" {
				t.Errorf("readResolvConf(%q) mismatch (-want +got):\n%s", tt.file, d)
			}
		})
	}
}

func TestReadResolvConfErrors(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"invalid-resolv-nameserver.conf", `resolv.conf testdata/invalid-resolv-nameserver.conf: line 3: nameserver "abc" is not an IP address`},
		{"invalid-resolv-nameserver-port.conf", `line 1: nameserver "10.0.0.2:53" is not an IP address`},
		{"invalid-resolv-empty-nameserver.conf", `line 1: nameserver needs an IP address`},
		{"invalid-resolv-ndots.conf", `line 2: option "ndots:x" needs a whole number`},
		{"invalid-resolv-search.conf", `line 2: search needs at least one domain name`},
		{"missing.conf", `resolv.conf testdata/missing.conf: cannot open: no such file or directory`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := readResolvConf(filepath.Join("testdata", tt.file))
			if err == nil {
				t.Fatalf("readResolvConf(%q) = nil error, want %q", tt.file, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "resolv.conf testdata/"+tt.file+": ") {
				t.Errorf("readResolvConf(%q) error = %q, want it to name the file and contain %q", tt.file, err, tt.want)
			}
		})
	}
}

func TestParseNameserver(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"10.0.0.2", "10.0.0.2:53", true},
		{"127.0.0.1:5353", "127.0.0.1:5353", true},
		{"::1", "[::1]:53", true},
		{"[::1]", "[::1]:53", true},
		{"[::1]:5353", "[::1]:5353", true},
		{"dns.example:53", "", false},
		{"10.0.0.2:x", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, err := parseNameserver(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseNameserver(%q) = %q, %v; want %q, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseResolvConf(f *testing.F) {
	for _, s := range []string{
		"nameserver 10.0.0.2\nsearch a.example b.example\noptions ndots:5 timeout:1 attempts:2\n",
		"domain x\n; comment\n# comment\nnameserver ::1%lo\n",
		"options ndots:-1\n", "nameserver 1.2.3.4 5.6.7.8\nsearch . \n", "options timeout:99999999999999999999\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		rc, err := parseResolvConf(strings.NewReader(in), "fuzz")
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "resolv.conf fuzz: ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q: want one line naming the file", msg)
			}
			return
		}
		if len(rc.nameservers) > maxNameservers {
			t.Errorf("%d nameservers, want at most %d", len(rc.nameservers), maxNameservers)
		}
		for _, ns := range rc.nameservers {
			if ap, err := netip.ParseAddrPort(ns); err != nil || ap.Port() != 53 {
				t.Errorf("nameserver %q: want IP:53", ns)
			}
		}
		for _, d := range rc.search {
			if d == "" || strings.ContainsAny(d, " \t\n#;") || strings.HasSuffix(d, ".") {
				t.Errorf("search domain %q: want a non-empty word without trailing dot", d)
			}
		}
		if rc.ndots < 0 || rc.ndots > maxNdots || rc.timeout < 0 || rc.timeout > maxTimeout || rc.attempts < 0 || rc.attempts > maxAttempts {
			t.Errorf("options ndots=%d timeout=%d attempts=%d out of range", rc.ndots, rc.timeout, rc.attempts)
		}
	})
}
