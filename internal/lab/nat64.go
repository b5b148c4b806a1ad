package lab

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/pullpath/pullpath/internal/childproc"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/units"
)

// The scenario's NAT64 (scenario/nat64.go): Debian's tayga, userspace, on
// a tun device in the NAT64 host's namespace, started by that host's `lab
// serve` and dying with it.

// taygaBinary is Debian's tayga (apt package tayga).
const taygaBinary = "/usr/sbin/tayga"

// NAT64ServeConfig is tayga's part of a serve config.
type NAT64ServeConfig struct {
	Prefix string `json:"prefix"` // the NAT64 /96
	Pool   string `json:"pool"`   // tayga's IPv4 pool; its first address is tayga's
	Dir    string `json:"dir"`    // tayga's config and data dir
}

// prepareNAT64 adds tayga to the NAT64 host's serve config.
func prepareNAT64(t *scenario.Scenario, runDir string, cfg func(host string) *ServeConfig) error {
	n := t.NAT64
	if n == nil {
		return nil
	}
	if _, err := os.Stat(taygaBinary); err != nil {
		return fmt.Errorf("nat64: %s not found: install Debian's tayga (apt-get install tayga)", taygaBinary)
	}
	dir := filepath.Join(runDir, "nat64")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cfg(n.Host).NAT64 = &NAT64ServeConfig{Prefix: n.PrefixOrDefault().String(), Pool: n.PoolOrDefault().String(), Dir: dir}
	if d := n.DNS64; d != nil {
		if _, err := os.Stat(unboundBinary); err != nil {
			return fmt.Errorf("nat64.dns64: %s not found: install Debian's unbound (apt-get install unbound)", unboundBinary)
		}
		ddir := filepath.Join(runDir, "dns64")
		if err := os.MkdirAll(ddir, 0o755); err != nil {
			return err
		}
		cfg(d.Host).DNS64 = &DNS64ServeConfig{Address: d.Address, Upstream: d.Upstream, Prefix: n.PrefixOrDefault().String(), Dir: ddir}
	}
	return nil
}

// unboundBinary is Debian's unbound (apt package unbound; its dns64
// module is built in).
const unboundBinary = "/usr/sbin/unbound"

// DNS64ServeConfig is unbound's part of a serve config.
type DNS64ServeConfig struct {
	Address  string `json:"address"`  // where it answers (port 53)
	Upstream string `json:"upstream"` // the lab DNS server it forwards to (port 53)
	Prefix   string `json:"prefix"`   // the NAT64 /96 it synthesizes into
	Dir      string `json:"dir"`      // its config, pid file and log
}

// startDNS64 writes unbound's config (its own file: nothing of /etc is
// read) and starts it in the foreground in this namespace (the DNS64
// host's), as root without a chroot, answering on one address; it waits,
// bounded, until unbound answers a question.
func startDNS64(ctx context.Context, c *DNS64ServeConfig) (*nat64Proc, error) {
	conf := filepath.Join(c.Dir, "unbound.conf")
	q := func(s string) string { return `"` + s + `"` }
	body := strings.Join([]string{
		"server:",
		"  interface: " + c.Address,
		"  port: 53",
		"  do-daemonize: no",
		"  use-systemd: no",
		"  username: \"\"",
		"  chroot: \"\"",
		"  directory: " + q(c.Dir),
		"  pidfile: " + q(filepath.Join(c.Dir, "unbound.pid")),
		"  logfile: " + q(filepath.Join(c.Dir, "unbound.log")),
		"  use-syslog: no",
		"  verbosity: 1",
		"  access-control: 0.0.0.0/0 allow",
		"  access-control: ::/0 allow",
		"  module-config: \"dns64 iterator\"",
		"  dns64-prefix: " + c.Prefix,
		"  do-not-query-localhost: no",
		"  qname-minimisation: no",
		"  num-threads: 1",
		"  outgoing-range: 64",
		"  so-rcvbuf: 0",
		"  so-sndbuf: 0",
		"  cache-max-ttl: 0",
		"remote-control:",
		"  control-enable: no",
		"forward-zone:",
		"  name: \".\"",
		"  forward-addr: " + c.Upstream + "@53",
	}, "\n") + "\n"
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(c.Dir, "unbound.stderr"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(unboundBinary, "-d", "-c", conf)
	cmd.Env = CleanEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childproc.SysProcAttr(false)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("dns64: start unbound: %v", err)
	}
	p := &nat64Proc{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); logf.Close(); close(p.done) }()
	addr := netip.AddrPortFrom(netip.MustParseAddr(c.Address), 53).String()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-p.done:
			b, _ := os.ReadFile(filepath.Join(c.Dir, "unbound.log"))
			e, _ := os.ReadFile(filepath.Join(c.Dir, "unbound.stderr"))
			return nil, fmt.Errorf("dns64: unbound exited: %s %s", units.OneLine(string(e)), units.OneLine(lastLine(string(b))))
		default:
		}
		if dnsAnswers(addr) {
			return p, nil
		}
		if time.Now().After(deadline) {
			p.Close()
			return nil, fmt.Errorf("dns64: unbound did not answer on %s in 10s", addr)
		}
		select {
		case <-ctx.Done():
			p.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// dnsAnswers asks addr one question (the root's NS, answered or refused:
// any answer means it listens).
func dnsAnswers(addr string) bool {
	m := new(dns.Msg)
	m.SetQuestion(".", dns.TypeSOA)
	cl := &dns.Client{Timeout: 300 * time.Millisecond}
	_, _, err := cl.Exchange(m, addr)
	return err == nil
}

func lastLine(s string) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return ls[len(ls)-1]
}

// nat64Proc is a running tayga.
type nat64Proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// startNAT64 writes tayga's config, makes its tun device (nat64), routes the
// prefix and the pool to it, and starts tayga in the foreground. This
// process is in the NAT64 host's namespace.
func startNAT64(ctx context.Context, c *NAT64ServeConfig) (*nat64Proc, error) {
	pool, err := netip.ParsePrefix(c.Pool)
	if err != nil {
		return nil, fmt.Errorf("nat64 pool %q: %v", c.Pool, err)
	}
	conf := filepath.Join(c.Dir, "tayga.conf")
	body := strings.Join([]string{
		"tun-device nat64",
		"ipv4-addr " + pool.Masked().Addr().Next().String(),
		"prefix " + c.Prefix,
		"dynamic-pool " + c.Pool,
		"data-dir " + c.Dir,
	}, "\n") + "\n"
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		return nil, err
	}
	if _, err := run(ctx, "", taygaBinary, "-c", conf, "--mktun"); err != nil {
		return nil, fmt.Errorf("nat64: %v", err)
	}
	if err := ipBatch(ctx, "", []string{
		"link set nat64 up",
		"route add " + c.Pool + " dev nat64",
		"route add " + c.Prefix + " dev nat64",
	}); err != nil {
		return nil, fmt.Errorf("nat64: %v", err)
	}
	logf, err := os.Create(filepath.Join(c.Dir, "tayga.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(taygaBinary, "-d", "-c", conf)
	cmd.Env = CleanEnv()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childproc.SysProcAttr(false)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("nat64: start tayga: %v", err)
	}
	p := &nat64Proc{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); logf.Close(); close(p.done) }()
	// tayga reads the tun at once; a quick exit is a bad config
	select {
	case <-p.done:
		b, _ := os.ReadFile(filepath.Join(c.Dir, "tayga.log"))
		return nil, fmt.Errorf("nat64: tayga exited: %s", units.OneLine(string(b)))
	case <-time.After(100 * time.Millisecond):
	}
	return p, nil
}

// Close stops tayga; the tun device goes with the namespace.
func (p *nat64Proc) Close() error {
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
	}
	select {
	case <-p.done:
	case <-time.After(3 * time.Second):
	}
	return nil
}
