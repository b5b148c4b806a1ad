package netcheck

import (
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestReadHosts(t *testing.T) {
	h, warnings, err := readHosts(filepath.Join("testdata", "valid-hosts"))
	if err != nil || len(warnings) > 0 {
		t.Fatalf("readHosts(valid-hosts) error: %v, warnings %q", err, warnings)
	}
	tests := []struct {
		name string
		want []netip.Addr
	}{
		{"registry.corp.example", addrs("10.20.30.40", "10.20.30.41", "fd00::40")},
		{"REGISTRY.corp.example.", addrs("10.20.30.40", "10.20.30.41", "fd00::40")},
		{"registry", addrs("10.20.30.40")},
		{"localhost", addrs("127.0.0.1", "::1")},
		{"ip6-localhost", addrs("::1")},
		{"other.corp.example", nil},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, h.lookup(tt.name), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); d != "" {
				t.Errorf("lookup(%q) mismatch (-want +got):\n%s", tt.name, d)
			}
		})
	}
}

// A junk line is skipped with a warning naming it, as glibc and Go skip
// it; the lines around it still count.
func TestReadHostsJunkLines(t *testing.T) {
	tests := []struct {
		file     string
		warnings []string
		lookup   string
		want     []netip.Addr
	}{
		{"junk-hosts-address", []string{`hosts file testdata/junk-hosts-address: line 2 skipped: "registry.corp.example" is not an IP address`}, "registry.corp.example", addrs("10.20.30.41")},
		{"junk-hosts-noname", []string{`hosts file testdata/junk-hosts-noname: line 3 skipped: address 10.20.30.40 has no host name`}, "localhost", addrs("127.0.0.1")},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			h, warnings, err := readHosts(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatalf("readHosts(%q) error = %v, want the line skipped", tt.file, err)
			}
			if d := cmp.Diff(tt.warnings, warnings); d != "" {
				t.Errorf("warnings mismatch (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.want, h.lookup(tt.lookup), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); d != "" {
				t.Errorf("lookup(%q) mismatch (-want +got):\n%s", tt.lookup, d)
			}
		})
	}
	if _, _, err := readHosts(filepath.Join("testdata", "missing-hosts")); err == nil || err.Error() != "hosts file testdata/missing-hosts: cannot open: no such file or directory" {
		t.Errorf("readHosts(missing) error = %v, want a one-line error naming the file", err)
	}
}

func FuzzParseHosts(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1 localhost\n::1 localhost ip6-localhost\n",
		"10.0.0.1 A.Example. b # c\n#x\n", "fe80::1%eth0 ll\n", "1.2.3.4\n", "x y\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		h, warnings, err := parseHosts(strings.NewReader(in), "fuzz")
		for _, w := range warnings {
			if !strings.HasPrefix(w, "hosts file fuzz: line ") || strings.ContainsAny(w, "\n\r") {
				t.Fatalf("warning %q: want one line naming the file and the line", w)
			}
		}
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "hosts file fuzz: ") || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error %q: want one line naming the file", msg)
			}
			return
		}
		for name, as := range h {
			if name == "" || name != hostKey(name) || strings.HasSuffix(name, ".") || strings.ContainsAny(name, " \t#") {
				t.Errorf("name %q: want non-empty, lower case, no trailing dot, no blank or '#'", name)
			}
			if len(as) == 0 {
				t.Errorf("name %q has no address", name)
			}
			for _, a := range as {
				if !a.IsValid() {
					t.Errorf("name %q: invalid address", name)
				}
			}
			upper := []byte(name + ".")
			for i, c := range upper {
				if 'a' <= c && c <= 'z' {
					upper[i] = c - 'a' + 'A'
				}
			}
			if got := h.lookup(string(upper)); len(got) != len(as) {
				t.Errorf("lookup(%q) = %v, want %v (case-insensitive, trailing dot ignored)", upper, got, as)
			}
		}
	})
}
