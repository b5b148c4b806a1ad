//go:build !fuzzonly

package netcheck

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/sys/unix"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// familyZone is what the family tests' nameserver answers: both families,
// A only, AAAA only (loopback, so the dials stay on this machine), and an
// A-only documentation address for the IPv6-only namespace.
var familyZone = map[string][]string{
	"dual.family.test.":   {"A 127.0.0.1", "AAAA ::1"},
	"v4only.family.test.": {"A 127.0.0.1"},
	"v6only.family.test.": {"AAAA ::1"},
	"aonly.family.test.":  {"A 192.0.2.10"},
}

func familyDNS(w dns.ResponseWriter, req *dns.Msg) {
	q := req.Question[0]
	m := new(dns.Msg)
	m.SetReply(req)
	recs, ok := familyZone[strings.ToLower(q.Name)]
	if !ok {
		m.Rcode = dns.RcodeNameError
	}
	for _, r := range recs {
		if t, _, _ := strings.Cut(r, " "); t == dns.TypeToString[q.Qtype] {
			m.Answer = append(m.Answer, rr(q.Name, r))
		}
	}
	w.WriteMsg(m)
}

// listenBoth returns a port free on both ::1 and 127.0.0.1, with real
// listeners on the families asked for; the others stay closed (refused).
func listenBoth(t *testing.T, v4, v6 bool) int {
	t.Helper()
	for range 20 {
		probe, err := net.Listen("tcp", "[::1]:0")
		if err != nil {
			t.Fatalf("listen on ::1: %v (the tests need IPv6 on loopback)", err)
		}
		port := probe.Addr().(*net.TCPAddr).Port
		l4, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			probe.Close()
			continue
		}
		keep := func(l net.Listener, want bool) {
			if !want {
				l.Close()
				return
			}
			acceptEach(t, l, func(c net.Conn) { c.Close() })
		}
		keep(probe, v6)
		keep(l4, v4)
		return port
	}
	t.Fatal("no port free on both ::1 and 127.0.0.1")
	return 0
}

// blackholeV6 listens on [::1]:port with a backlog of 0 and fills its
// accept queue, so the kernel drops every further SYN: a real listener
// that never answers, as a path that drops IPv6 looks to the dialer.
func blackholeV6(t *testing.T, port int) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}); err != nil {
		t.Fatalf("bind [::1]:%d: %v", port, err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("::1", strconv.Itoa(port))
	// Fill the queue: connects complete until it is full, then hang.
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			if i == 0 {
				t.Fatalf("the first connect to the backlog-0 listener failed: %v", err)
			}
			return
		}
		t.Cleanup(func() { c.Close() })
		if i > 8 {
			t.Fatal("the accept queue of a backlog-0 listener never filled")
		}
	}
}

func TestFamiliesLoopback(t *testing.T) {
	ns := startDNS(t, familyDNS)
	tests := []struct {
		name      string
		host      string
		v4, v6    bool // which families listen
		blackhole bool // v6 drops SYNs instead of refusing
		want      verdict.Code
		results   [2]string // ipv4, ipv6 results
		primary   string
		dialed    string
		fellBack  bool
	}{
		{name: "dual stack, both work", host: "dual.family.test", v4: true, v6: true, results: [2]string{"ok", "ok"}, primary: FamilyIPv6, dialed: FamilyIPv6},
		{name: "IPv6 refused, IPv4 works", host: "dual.family.test", v4: true, want: verdict.IPv6PathBroken, results: [2]string{"ok", "refused"}, primary: FamilyIPv6, dialed: FamilyIPv4, fellBack: true},
		{name: "IPv6 dropped, IPv4 works", host: "dual.family.test", v4: true, blackhole: true, want: verdict.IPv6PathBroken, results: [2]string{"ok", "timeout"}, primary: FamilyIPv6, dialed: FamilyIPv4, fellBack: true},
		{name: "IPv4 refused, IPv6 works", host: "dual.family.test", v6: true, want: verdict.IPv4PathBroken, results: [2]string{"refused", "ok"}, primary: FamilyIPv6, dialed: FamilyIPv6},
		{name: "A only", host: "v4only.family.test", v4: true, results: [2]string{"ok", ""}, primary: FamilyIPv4, dialed: FamilyIPv4},
		{name: "AAAA only", host: "v6only.family.test", v6: true, results: [2]string{"", "ok"}, primary: FamilyIPv6, dialed: FamilyIPv6},
		{name: "both refused", host: "dual.family.test", results: [2]string{"refused", "refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChecker(t, Config{Nameservers: []string{ns}, ConnectTimeout: time.Second})
			port := listenBoth(t, tt.v4, tt.v6)
			if tt.blackhole {
				blackholeV6(t, port)
			}
			ctx := context.Background()
			res := c.Resolve(ctx, tt.host)
			if res.Code != "" {
				t.Fatalf("Resolve(%q) = %s: %s", tt.host, res.Code, res.Error)
			}
			results := c.ConnectAll(ctx, res.Answers, port)
			f := c.Families(ctx, res, results, port)
			if f == nil {
				t.Fatalf("Families(%q) = nil", tt.host)
			}
			if f.Code != tt.want {
				t.Errorf("Families(%q).Code = %q (%s), want %q", tt.host, f.Code, f.Detail, tt.want)
			}
			if got := [2]string{f.IPv4.Result, f.IPv6.Result}; got != tt.results {
				t.Errorf("Families(%q) results (ipv4, ipv6) = %v, want %v", tt.host, got, tt.results)
			}
			for fam, p := range map[string]report.FamilyPath{FamilyIPv4: f.IPv4, FamilyIPv6: f.IPv6} {
				if p.HostAddresses > 0 && (p.Source == "" || p.NoRoute != "") {
					t.Errorf("Families(%q).%s: source %q, noRoute %q; want the loopback source", tt.host, fam, p.Source, p.NoRoute)
				}
			}
			if tt.primary == "" {
				if f.Dial != nil {
					t.Errorf("Families(%q).Dial = %+v, want none when nothing connects", tt.host, f.Dial)
				}
				return
			}
			if f.Dial == nil {
				t.Fatalf("Families(%q).Dial = nil", tt.host)
			}
			d := f.Dial
			if d.Primary != tt.primary || d.Family != tt.dialed || d.FellBack != tt.fellBack || d.Error != "" {
				t.Errorf("Families(%q).Dial = %+v, want primary %s, dialed %s, fellBack %v", tt.host, d, tt.primary, tt.dialed, tt.fellBack)
			}
			if tt.blackhole && d.DurationMS < units.MS(FallbackDelay) {
				t.Errorf("Families(%q).Dial took %.1f ms with IPv6 dropped, want at least the fallback delay %v", tt.host, d.DurationMS, FallbackDelay)
			}
			if !tt.blackhole && d.DurationMS >= units.MS(FallbackDelay) {
				t.Errorf("Families(%q).Dial took %.1f ms, want less than the fallback delay %v (a refused IPv6 falls back at once)", tt.host, d.DurationMS, FallbackDelay)
			}
			if tt.want == verdict.IPv6PathBroken && !strings.Contains(f.Detail, "fell back to IPv4") {
				t.Errorf("Families(%q).Detail = %q, want it to say Go fell back to IPv4", tt.host, f.Detail)
			}
			t.Logf("%s: order %v, dial %+v", tt.name, f.Order, *d)
		})
	}
}

// TestFamiliesIPv6OnlyNode asks for an A-only name from a node that has an
// IPv6 address and no IPv4 one beyond loopback (a network namespace with a
// veth to a peer namespace and no default route): the kernel has no route to the
// A record, and the finding says so.
func TestFamiliesIPv6OnlyNode(t *testing.T) {
	testenv.RequireNetns(t)
	ns := startDNS(t, familyDNS)
	name := fmt.Sprintf("ppfam%d", time.Now().UnixNano()%1e6)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	peer := name + "p"
	for _, n := range []string{name, peer} {
		run("netns", "add", n)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", n).Run() })
		run("-n", n, "link", "set", "lo", "up")
	}
	// The node's one link is a veth to a peer namespace: no end in the
	// root namespace, no default route anywhere.
	run("link", "add", "v6only0", "netns", name, "type", "veth", "peer", "name", "v6peer0", "netns", peer)
	run("-n", name, "addr", "add", "fd00:27::2/64", "dev", "v6only0", "nodad")
	run("-n", name, "link", "set", "v6only0", "up")
	run("-n", peer, "link", "set", "v6peer0", "up")

	c := newChecker(t, Config{Nameservers: []string{ns}, ConnectTimeout: time.Second})
	ctx := context.Background()
	// The nameserver is asked from here (root namespace, loopback); the
	// node's side runs on one thread inside the namespace.
	res := c.Resolve(ctx, "aonly.family.test")
	if res.Code != "" || len(res.Answers) != 1 {
		t.Fatalf("Resolve(aonly.family.test) = %s %v: %s", res.Code, res.Answers, res.Error)
	}
	var f *report.Families
	var result report.AddrResult
	err := testenv.InNetns(name, func() error {
		result = c.connect(ctx, res.Answers[0], 443)
		f = c.Families(ctx, res, []report.AddrResult{result}, 443)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if result.Result != "unreachable" {
		t.Errorf("connect(192.0.2.10:443) from an IPv6-only namespace = %s (%s), want unreachable", result.Result, result.Error)
	}
	if f == nil {
		t.Fatal("Families = nil")
	}
	if f.Code != verdict.AddressFamilyUnusable || !strings.Contains(f.Detail, "only IPv4 addresses and the node is IPv6-only") {
		t.Errorf("Families = %q %q, want %s saying the node is IPv6-only", f.Code, f.Detail, verdict.AddressFamilyUnusable)
	}
	if f.IPv6.NodeAddress != "fd00:27::2" || f.IPv4.NodeAddress != "" {
		t.Errorf("node addresses ipv4 %q, ipv6 %q; want none and fd00:27::2", f.IPv4.NodeAddress, f.IPv6.NodeAddress)
	}
	if f.IPv4.DefaultRoute || f.IPv6.DefaultRoute {
		t.Errorf("default routes ipv4 %v, ipv6 %v in a namespace that has none", f.IPv4.DefaultRoute, f.IPv6.DefaultRoute)
	}
	if f.IPv4.Source != "" || !strings.Contains(f.IPv4.NoRoute, "network is unreachable") {
		t.Errorf("ipv4 source %q, noRoute %q; want no source, network is unreachable", f.IPv4.Source, f.IPv4.NoRoute)
	}
	if f.Dial != nil {
		t.Errorf("Dial = %+v, want none when nothing connects", f.Dial)
	}
}

func TestHasDefaultRoute(t *testing.T) {
	v4 := writeFile(t, "route", "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"+
		"eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"+
		"eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n")
	v4none := writeFile(t, "route", "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"+
		"eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n")
	zero := strings.Repeat("0", 32)
	v6 := writeFile(t, "ipv6_route", zero+" 00 "+zero+" 00 fd000000000000000000000000000001 00000400 00000001 00000000 00000003 eth0\n")
	v6reject := writeFile(t, "ipv6_route", zero+" 00 "+zero+" 00 "+zero+" ffffffff 00000001 00000000 00200200 lo\n"+
		"fd000000000000000000000000000000 40 "+zero+" 00 "+zero+" 00000100 00000001 00000000 00000001 eth0\n")
	tests := []struct {
		file, fam string
		want      bool
	}{
		{v4, FamilyIPv4, true},
		{v4none, FamilyIPv4, false},
		{v6, FamilyIPv6, true},
		{v6reject, FamilyIPv6, false},
		{"/nonexistent/route", FamilyIPv4, false},
	}
	for _, tt := range tests {
		if got := hasDefaultRoute(tt.file, tt.fam); got != tt.want {
			t.Errorf("hasDefaultRoute(%s, %s) = %v, want %v", tt.file, tt.fam, got, tt.want)
		}
	}
}

func TestFamilyOf(t *testing.T) {
	for in, want := range map[string]string{"10.0.0.1": FamilyIPv4, "::ffff:10.0.0.1": FamilyIPv4, "2600:1f18::1": FamilyIPv6, "::1": FamilyIPv6} {
		if got := FamilyOf(netip.MustParseAddr(in)); got != want {
			t.Errorf("FamilyOf(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestFamilyFindingSingleStackNode: a family the node has no address of is
// not a broken path (an IPv6-only node behind DNS64 sees the registry's A
// record too; an IPv4-only node a dual-stack registry's AAAA), while the
// same results on a node that has the family are.
func TestFamilyFindingSingleStackNode(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    report.Families
		want verdict.Code
	}{
		{"IPv6-only node, A record unreachable, DNS64 AAAA connects",
			report.Families{
				IPv4: report.FamilyPath{HostAddresses: 1, Result: "unreachable", NoRoute: "network is unreachable"},
				IPv6: report.FamilyPath{HostAddresses: 1, Result: "ok", NodeAddress: "2001:db8:61:1::10", Source: "2001:db8:61:1::10"},
			}, ""},
		{"IPv4-only node, AAAA unreachable, A connects",
			report.Families{
				IPv4: report.FamilyPath{HostAddresses: 1, Result: "ok", NodeAddress: "10.0.1.10", Source: "10.0.1.10"},
				IPv6: report.FamilyPath{HostAddresses: 1, Result: "unreachable", NoRoute: "network is unreachable"},
			}, ""},
		{"dual-stack node, IPv4 times out, IPv6 connects",
			report.Families{
				IPv4: report.FamilyPath{HostAddresses: 1, Result: "timeout", NodeAddress: "10.0.1.10", Source: "10.0.1.10"},
				IPv6: report.FamilyPath{HostAddresses: 1, Result: "ok", NodeAddress: "2001:db8:61:1::10", Source: "2001:db8:61:1::10"},
			}, verdict.IPv4PathBroken},
		{"dual-stack node, IPv6 times out, IPv4 connects",
			report.Families{
				IPv4: report.FamilyPath{HostAddresses: 1, Result: "ok", NodeAddress: "10.0.1.10", Source: "10.0.1.10"},
				IPv6: report.FamilyPath{HostAddresses: 1, Result: "timeout", NodeAddress: "2001:db8:61:1::10", Source: "2001:db8:61:1::10"},
			}, verdict.IPv6PathBroken},
	} {
		if got, d := familyFinding(&tt.f); got != tt.want {
			t.Errorf("%s: familyFinding = %q (%s), want %q", tt.name, got, d, tt.want)
		}
	}
}
