//go:build !fuzzonly

package netcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
)

const traceHelperEnv = "PULLPATH_TRACE_TEST_HELPER"

// TestTraceHelper is not a test: TestTrace runs the test binary inside the
// client's namespace, as an unprivileged user, with it.
func TestTraceHelper(t *testing.T) {
	addr := os.Getenv(traceHelperEnv)
	if addr == "" {
		t.Skip("helper process only")
	}
	tr := Trace(context.Background(), netip.MustParseAddrPort(addr), TraceOptions{MaxHops: 6, Wait: time.Second})
	json.NewEncoder(os.Stdout).Encode(tr)
}

// TestTrace builds client -- r1 -- r2 -- server namespaces and traces the
// server's port from the client as user nobody (no capability): first the
// whole path, then with r2 lacking its route back to the client's subnet,
// where the trace ends at r1 and r2 is the first silent hop.
func TestTrace(t *testing.T) {
	testenv.RequireNetns(t)
	if _, err := exec.LookPath("setpriv"); err != nil {
		testenv.Unavailable(t, "needs setpriv (util-linux) to run the trace as an unprivileged user")
	}
	p := fmt.Sprintf("pptr%d", os.Getpid()%100000)
	c, r1, r2, s := p+"c", p+"a", p+"b", p+"s"
	ip := ipRunner(t)
	for _, n := range []string{c, r1, r2, s} {
		ip("netns", "add", n)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", n).Run() })
		ip("-n", n, "link", "set", "lo", "up")
	}
	link := func(a, aIf, aAddr, b, bIf, bAddr string) {
		ip("link", "add", aIf, "netns", a, "type", "veth", "peer", "name", bIf, "netns", b)
		ip("-n", a, "addr", "add", aAddr, "dev", aIf)
		ip("-n", b, "addr", "add", bAddr, "dev", bIf)
		ip("-n", a, "link", "set", aIf, "up")
		ip("-n", b, "link", "set", bIf, "up")
	}
	link(c, "t0", "10.252.1.2/24", r1, "t0", "10.252.1.1/24")
	link(r1, "t1", "10.252.2.1/24", r2, "t1", "10.252.2.2/24")
	link(r2, "t2", "10.252.3.1/24", s, "t2", "10.252.3.2/24")
	ip("-n", c, "route", "add", "10.252.0.0/16", "via", "10.252.1.1")
	ip("-n", r1, "route", "add", "10.252.3.0/24", "via", "10.252.2.2")
	ip("-n", r2, "route", "add", "10.252.1.0/24", "via", "10.252.2.1")
	ip("-n", s, "route", "add", "10.252.0.0/16", "via", "10.252.3.1")
	for _, r := range []string{r1, r2} {
		if out, err := exec.Command("ip", "netns", "exec", r, "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward").CombinedOutput(); err != nil {
			t.Fatalf("forwarding in %s: %v: %s", r, err, out)
		}
	}
	ln := listenIn(t, s, func() (net.Listener, error) { return net.Listen("tcp", "10.252.3.2:8443") })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(io.Discard, conn); conn.Close() }()
		}
	}()
	// a copy of the test binary that user nobody may run
	dir, err := os.MkdirTemp("", "pptrace")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "netcheck.test")
	if out, err := exec.Command("cp", os.Args[0], bin).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	trace := func(t *testing.T) *report.Trace {
		t.Helper()
		cmd := exec.Command("ip", "netns", "exec", c, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all",
			bin, "-test.run=^TestTraceHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), traceHelperEnv+"=10.252.3.2:8443")
		var tr report.Trace
		helperReport(t, cmd, &tr)
		return &tr
	}
	hops := func(tr *report.Trace) string {
		var s []string
		for _, h := range tr.Hops {
			s = append(s, fmt.Sprintf("%d %s %s", h.TTL, h.Result, h.Address))
		}
		return strings.Join(s, "; ")
	}

	t.Run("the whole path", func(t *testing.T) {
		tr := trace(t)
		want := "1 time-exceeded 10.252.1.1; 2 time-exceeded 10.252.2.2; 3 reached 10.252.3.2"
		if got := hops(tr); got != want || !tr.Reached || tr.LastAnswered != 2 || tr.FirstSilent != 0 {
			t.Errorf("Trace = %q (reached %v, last %d, first silent %d), want %q, reached, last 2", got, tr.Reached, tr.LastAnswered, tr.FirstSilent, want)
		}
		t.Logf("trace of a healthy path: %.0f ms", tr.DurationMS)
	})
	t.Run("r2 has no route back", func(t *testing.T) {
		ip("-n", r2, "route", "del", "10.252.1.0/24")
		tr := trace(t)
		if tr.Reached || tr.LastAnswered != 1 || tr.LastAddress != "10.252.1.1" || tr.FirstSilent != 2 {
			t.Errorf("Trace = %q (reached %v, last %d %s, first silent %d), want last 1 10.252.1.1, first silent 2", hops(tr), tr.Reached, tr.LastAnswered, tr.LastAddress, tr.FirstSilent)
		}
		if tr.DurationMS > 2500 {
			t.Errorf("the trace took %.0f ms, want two rounds of 1 s at most", tr.DurationMS)
		}
		t.Logf("trace of a black-holed hop: %.0f ms", tr.DurationMS)
	})
}
