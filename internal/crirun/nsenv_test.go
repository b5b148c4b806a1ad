package crirun

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/pullpath/pullpath/internal/testenv"
)

// needRuntime skips (or, with CI=true, fails) a test that needs root,
// network namespaces, containerd and crictl. It returns crictl's path.
func needRuntime(t *testing.T) string {
	t.Helper()
	reason := testenv.NetnsReason("containerd", "ctr")
	crictl := ""
	if reason == "" {
		var err error
		if crictl, err = findCrictl(""); err != nil {
			reason = err.Error()
		}
	}
	testenv.Unavailable(t, reason)
	return crictl
}

var nsSeq atomic.Int64

// testNetns creates an isolated namespace (lo up, IPv6 off, no other
// link, no route but loopback's) with resolv.conf naming nameserver, and
// removes it, with /etc/netns/NAME, when the test ends.
func testNetns(t *testing.T, nameserver string) string {
	t.Helper()
	name := fmt.Sprintf("ppcri-%d-%d", os.Getpid(), nsSeq.Add(1))
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	run("ip", "netns", "add", name)
	etc := filepath.Join("/etc/netns", name)
	t.Cleanup(func() {
		_ = exec.Command("ip", "netns", "del", name).Run()
		_ = os.RemoveAll(etc)
	})
	run("ip", "-n", name, "link", "set", "lo", "up")
	run("ip", "netns", "exec", name, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1")
	// The isolation this test relies on: loopback only, no default route.
	out, err := exec.Command("ip", "-n", name, "-o", "link", "show").Output()
	if err != nil {
		t.Fatalf("ip -n %s link show: %v", name, err)
	}
	if n := strings.Count(strings.TrimSpace(string(out)), "\n") + 1; n != 1 || !strings.Contains(string(out), " lo:") {
		t.Fatalf("namespace %s has links other than lo: %s", name, out)
	}
	if out, _ := exec.Command("ip", "-n", name, "route", "show", "default").Output(); len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("namespace %s has a default route: %s", name, out)
	}
	if err := os.MkdirAll(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	conf := "nameserver " + nameserver + "\n"
	if err := os.WriteFile(filepath.Join(etc, "resolv.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(etc, "hosts"), []byte("127.0.0.1 localhost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// labDNS is an authoritative answerer for the test zone: A records from
// its map, NODATA for other types of known names, NXDOMAIN otherwise.
type labDNS map[string]string

func (z labDNS) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) == 1 {
		q := req.Question[0]
		ip, known := z[strings.ToLower(strings.TrimSuffix(q.Name, "."))]
		switch {
		case !known:
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeA:
			m.Answer = append(m.Answer, &dns.A{
				Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 5},
				A:   net.ParseIP(ip).To4(),
			})
		}
	}
	_ = w.WriteMsg(m)
}

// startDNS serves zone on addr (UDP and TCP) inside ns until the test ends.
func startDNS(t *testing.T, ns, addr string, zone labDNS) {
	t.Helper()
	var pc net.PacketConn
	var ln net.Listener
	err := testenv.InNetns(ns, func() (err error) {
		if pc, err = net.ListenPacket("udp4", addr); err != nil {
			return err
		}
		ln, err = net.Listen("tcp4", addr)
		return err
	})
	if err != nil {
		t.Fatalf("listen DNS on %s in %s: %v", addr, ns, err)
	}
	for _, s := range []*dns.Server{{PacketConn: pc, Handler: zone}, {Listener: ln, Handler: zone}} {
		s := s
		go func() { _ = s.ActivateAndServe() }()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = s.ShutdownContext(ctx)
		})
	}
}
