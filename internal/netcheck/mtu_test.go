//go:build !fuzzonly

package netcheck

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
)

func TestSpread(t *testing.T) {
	tests := []struct {
		lo, hi, n int
		want      string
	}{
		{536, 1459, 7, "[536 689 843 997 1151 1305 1459]"},
		{1361, 1459, 8, "[1361 1375 1389 1403 1417 1431 1445 1459]"},
		{1358, 1362, 8, "[1358 1359 1360 1361 1362]"},
		{10, 9, 8, "[]"},
		{5, 100, 1, "[52]"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(spread(tt.lo, tt.hi, tt.n)); got != tt.want {
			t.Errorf("spread(%d, %d, %d) = %s, want %s", tt.lo, tt.hi, tt.n, got, tt.want)
		}
	}
}

func TestBracket(t *testing.T) {
	res := []report.MSSAttempt{
		{MSS: 0, Result: "stalled"}, {MSS: 536, Result: "stalled"}, // a lost packet below what completed
		{MSS: 1151, Result: "completed"}, {MSS: 1305, Result: "completed"},
		{MSS: 1459, Result: "stalled"}, {MSS: 1400, Result: "stalled"}, {MSS: 1380, Result: "failed"},
	}
	if w, f := bracket(res, 0, 1460); w != 1305 || f != 1400 {
		t.Errorf("bracket = %d, %d; want 1305, 1400", w, f)
	}
	if w, f := bracket([]report.MSSAttempt{{MSS: 700, Result: "stalled"}}, 0, 1460); w != 0 || f != 700 {
		t.Errorf("bracket of a stall only = %d, %d; want 0, 700", w, f)
	}
}

const mtuHelperEnv = "PULLPATH_MTU_TEST_HELPER"

// TestMTUHelper is not a test: TestSearchMSSBlackHole runs the test
// binary inside the client's network namespace with it, so that every
// socket of the search (and the route lookup) is the namespace's.
func TestMTUHelper(t *testing.T) {
	addr := os.Getenv(mtuHelperEnv)
	if addr == "" {
		t.Skip("helper process only")
	}
	ap := netip.MustParseAddrPort(addr)
	s := MTUSearch{Address: ap, After: "tls", Budget: 8 * time.Second, Wait: 2 * time.Second, ConnectTimeout: time.Second}
	cfg := &tls.Config{InsecureSkipVerify: true}
	res := SearchMSS(context.Background(), s, TLSAttempt("mtu.lab.test", cfg))
	json.NewEncoder(os.Stdout).Encode(res)
}

// TestSearchMSSBlackHole builds client -- router -- server namespaces; the
// router's link toward the client has MTU 1400 (the ends keep 1500) and
// the router drops the ICMP "fragmentation needed" it generates: the
// server's first TLS flight (Go's post-quantum key share makes it larger
// than 1400 bytes) never arrives. The search finds MSS 1360 completes
// and 1361 stalls. With the router dropping every TLS data packet
// instead (what a filter that drops by SNI does), clamped connections
// stall too: not the MTU.
func TestSearchMSSBlackHole(t *testing.T) {
	testenv.RequireNetns(t, "nft")
	p := fmt.Sprintf("ppmtu%d", os.Getpid()%100000)
	c, r, s := p+"c", p+"r", p+"s"
	ip := ipRunner(t)
	nft := func(ns, rules string) {
		t.Helper()
		cmd := exec.Command("ip", "netns", "exec", ns, "nft", "-f", "-")
		cmd.Stdin = strings.NewReader(rules)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nft in %s: %v: %s", ns, err, out)
		}
	}
	for _, n := range []string{c, r, s} {
		ip("netns", "add", n)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", n).Run() })
		ip("-n", n, "link", "set", "lo", "up")
	}
	ip("link", "add", "m0", "netns", c, "type", "veth", "peer", "name", "r0", "netns", r)
	ip("link", "add", "m0", "netns", s, "type", "veth", "peer", "name", "r1", "netns", r)
	ip("-n", c, "addr", "add", "10.251.1.2/24", "dev", "m0")
	ip("-n", s, "addr", "add", "10.251.2.2/24", "dev", "m0")
	ip("-n", r, "addr", "add", "10.251.1.1/24", "dev", "r0")
	ip("-n", r, "addr", "add", "10.251.2.1/24", "dev", "r1")
	for _, l := range [][2]string{{c, "m0"}, {s, "m0"}, {r, "r0"}, {r, "r1"}} {
		ip("-n", l[0], "link", "set", l[1], "up")
	}
	ip("-n", c, "route", "add", "10.251.2.0/24", "via", "10.251.1.1")
	ip("-n", s, "route", "add", "10.251.1.0/24", "via", "10.251.2.1")
	if out, err := exec.Command("ip", "netns", "exec", r, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward").CombinedOutput(); err != nil {
		t.Fatalf("forwarding: %v: %s", err, out)
	}
	ip("-n", r, "link", "set", "r0", "mtu", "1400")
	nft(r, "table inet mtu {\n chain output {\n  type filter hook output priority 0; policy accept;\n  icmp type destination-unreachable counter drop\n }\n}\n")

	// the server: a TLS listener opened inside the server's namespace
	ca := newCA(t, "mtu test CA")
	cert := ca.leaf(t, time.Now().Add(-time.Hour), time.Now().Add(time.Hour), "mtu.lab.test")
	ln := listenIn(t, s, func() (net.Listener, error) {
		return tls.Listen("tcp", "10.251.2.2:8443", &tls.Config{Certificates: []tls.Certificate{cert}})
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(20 * time.Second))
				conn.(*tls.Conn).Handshake()
			}()
		}
	}()

	search := func(t *testing.T) *report.MTUTest {
		t.Helper()
		cmd := exec.Command("ip", "netns", "exec", c, os.Args[0], "-test.run=^TestMTUHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), mtuHelperEnv+"=10.251.2.2:8443")
		var res report.MTUTest
		helperReport(t, cmd, &res)
		return &res
	}

	t.Run("black hole", func(t *testing.T) {
		res := search(t)
		b, _ := json.Marshal(res)
		if res.Result != report.MTUBlackHole || res.WorkingMSS != 1360 || res.FailingMSS != 1361 || res.PathMTU != 1400 || !res.PathMTUExact {
			t.Fatalf("SearchMSS = %s %d/%d path MTU %d, want black-hole 1360/1361 path MTU 1400\n%s", res.Result, res.WorkingMSS, res.FailingMSS, res.PathMTU, b)
		}
		if res.NodeMSS != 1460 || res.Route == nil || res.Route.Interface != "m0" || res.Route.InterfaceMTU != 1500 || res.Route.Gateway != "10.251.1.1" {
			t.Errorf("node MSS %d, route %+v; want 1460 over m0 (MTU 1500) via 10.251.1.1", res.NodeMSS, res.Route)
		}
		if res.Attempts[0].MSS != 0 || res.Attempts[0].Result != "stalled" {
			t.Errorf("first attempt %+v, want the node's own (MSS 0) stalled again", res.Attempts[0])
		}
		if res.DurationMS > res.BudgetMS {
			t.Errorf("the test took %.0f ms, over its budget %.0f ms", res.DurationMS, res.BudgetMS)
		}
		t.Logf("MTU test: %d attempts in %.0f ms", len(res.Attempts), res.DurationMS)
	})

	t.Run("a filter drops the handshake whatever its size", func(t *testing.T) {
		nft(r, "table inet sni {\n chain forward {\n  type filter hook forward priority 0; policy accept;\n  tcp dport 8443 ip length > 100 counter drop\n }\n}\n")
		t.Cleanup(func() { exec.Command("ip", "netns", "exec", r, "nft", "delete", "table", "inet", "sni").Run() })
		res := search(t)
		if res.Result != report.MTUNotMTU || res.WorkingMSS != 0 {
			b, _ := json.Marshal(res)
			t.Fatalf("SearchMSS = %s (working %d), want not-mtu\n%s", res.Result, res.WorkingMSS, b)
		}
		for _, a := range res.Attempts {
			if a.Result == "completed" {
				t.Errorf("attempt %+v completed through a filter that drops every handshake", a)
			}
		}
	})

	t.Run("clamping on the router heals it: the stall does not repeat", func(t *testing.T) {
		nft(r, "table inet clamp {\n chain forward {\n  type filter hook forward priority -150; policy accept;\n  tcp flags syn tcp option maxseg size set 1360\n }\n}\n")
		t.Cleanup(func() { exec.Command("ip", "netns", "exec", r, "nft", "delete", "table", "inet", "clamp").Run() })
		res := search(t)
		if res.Result != report.MTUNotRepeated {
			b, _ := json.Marshal(res)
			t.Fatalf("SearchMSS = %s, want not-repeated (the node's own connection completes)\n%s", res.Result, b)
		}
	})
}
