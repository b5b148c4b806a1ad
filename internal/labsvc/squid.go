package labsvc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pullpath/pullpath/internal/childproc"
)

// Squid is a real forward proxy, Debian's squid (squid-openssl for TLS
// interception), run in the foreground with everything in a private
// folder: the node's corporate or cloud egress proxy in tests and labs.
// Its access log names every CONNECT and squid's answer to it.
type Squid struct {
	Addr string // IP:PORT it listens on
	Dir  string // its folder: squid.conf, access.log, cache.log
	// Service is squid's service name (-n), unique per instance: its
	// shared-memory segments are /dev/shm/<Service>-*.shm.
	Service string

	cmd  *exec.Cmd
	done chan struct{}
	once sync.Once
	werr error

	logMu   sync.Mutex
	logTail []string // the last lines squid wrote to stderr
}

// SquidConfig says where squid listens, how it resolves, and what it
// refuses.
type SquidConfig struct {
	Listen string // IP:PORT (a port of 0 picks a free one)
	Netns  string // run inside this named network namespace (ip netns exec); "" runs here
	// How squid resolves destinations: Hosts (name -> IP, squid's
	// hosts_file) first, then Nameservers (IPs on port 53); neither uses
	// the resolv.conf of the namespace squid runs in.
	Hosts       map[string]string
	Nameservers []string
	// Users makes squid demand Basic proxy authentication (407) for
	// every request; name -> password.
	Users map[string]string
	// Deny lists squid dstdomain entries whose CONNECTs are refused (403):
	// "registry.lab.test", ".blob.lab.test". Allow, when set, is the only
	// destinations allowed (a proxy that allow-lists the internet).
	Deny, Allow []string
	// Intercept makes squid bump TLS (ssl-bump), minting certificates for
	// each destination signed by this CA; UpstreamCAFile is the CA squid
	// trusts toward the servers it bumps.
	Intercept      *CA
	UpstreamCAFile string
	// ConnectTimeout is squid's connect_timeout toward destinations
	// (default 5s here; squid's own is a minute).
	ConnectTimeout time.Duration
}

// squidBinary is where Debian installs squid.
const squidBinary = "/usr/sbin/squid"

// SquidAvailable says why squid cannot run here, or "" when it can: the
// binary, and for interception squid-openssl's certificate helper.
func SquidAvailable(intercept bool) string {
	if _, err := os.Stat(squidBinary); err != nil {
		return "needs squid (apt-get install squid-openssl, with service starts denied: see hack/lib.sh apt_ensure_nostart)"
	}
	if intercept {
		if _, err := os.Stat("/usr/lib/squid/security_file_certgen"); err != nil {
			return "needs squid built with OpenSSL for ssl-bump (apt-get install squid-openssl)"
		}
	}
	if _, err := exec.LookPath("openssl"); err != nil {
		return "needs openssl (apt-get install openssl) for squid's password file"
	}
	return ""
}

// StartSquid writes squid's configuration into a fresh folder and starts
// it, returning once squid accepts connections (within 30s).
func StartSquid(ctx context.Context, cfg SquidConfig) (*Squid, error) {
	if why := SquidAvailable(cfg.Intercept != nil); why != "" {
		return nil, errors.New("squid: " + why)
	}
	host, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil || net.ParseIP(host) == nil {
		return nil, fmt.Errorf("squid listen %q: want IP:PORT", cfg.Listen)
	}
	if port == "0" {
		p, err := freePort(host, cfg.Netns)
		if err != nil {
			return nil, err
		}
		port = strconv.Itoa(p)
	}
	// A folder of its own under the system temp dir: squid drops to the
	// proxy user, which must reach it (a test's TempDir is 0700).
	dir, err := os.MkdirTemp("", "pp-squid-")
	if err != nil {
		return nil, err
	}
	s := &Squid{Addr: net.JoinHostPort(host, port), Dir: dir, Service: serviceName(dir), done: make(chan struct{})}
	fail := func(err error) (*Squid, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	conf, err := s.writeFiles(cfg)
	if err != nil {
		return fail(err)
	}
	if err := chownProxy(dir); err != nil {
		return fail(err)
	}
	// A service name of its own: squid names its shared-memory segments
	// after it (/dev/shm/squid-tls_session_cache.shm, squid-cf__*.shm), so
	// two squids of the default name, in parallel tests or lab hosts, map
	// the same TLS session cache and one aborts on the other's state.
	args := []string{squidBinary, "-n", s.Service, "-N", "-d", "1", "-f", conf}
	if cfg.Netns != "" {
		args = append([]string{"ip", "netns", "exec", cfg.Netns}, args...)
	}
	s.cmd = exec.Command(args[0], args[1:]...)
	s.cmd.SysProcAttr = childproc.SysProcAttr(false)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return fail(err)
	}
	s.cmd.Stdout = nil
	if err := s.cmd.Start(); err != nil {
		return fail(fmt.Errorf("start squid: %w", err))
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			line := sc.Text()
			s.logMu.Lock()
			if len(s.logTail) == 50 {
				s.logTail = s.logTail[1:]
			}
			s.logTail = append(s.logTail, line)
			s.logMu.Unlock()
			switch {
			case said:
			case strings.Contains(line, "Accepting") && strings.Contains(line, "connections at"):
				said = true
				ready <- nil
			case strings.Contains(line, "FATAL"):
				said = true
				ready <- errors.New(strings.TrimSpace(line))
			}
		}
		if !said {
			ready <- errors.New("squid exited before accepting connections")
		}
	}()
	go func() { s.werr = s.cmd.Wait(); close(s.done) }()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	select {
	case err := <-ready:
		if err == nil {
			// squid says "Accepting ... connections at" before its listen()
			// takes effect: the first connect that succeeds is the sign.
			err = waitListening(tctx, s.Addr, cfg.Netns)
		}
		if err == nil {
			return s, nil
		}
		s.Close()
		return nil, fmt.Errorf("squid on %s: %v\n%s", s.Addr, err, s.Log())
	case <-tctx.Done():
		s.Close()
		return nil, fmt.Errorf("squid on %s: not accepting connections within 30s", s.Addr)
	}
}

// waitListening connects to addr until it accepts (bounded by ctx). In a
// namespace of its own squid is reached by the caller through the lab.
func waitListening(ctx context.Context, addr, netns string) error {
	if netns != "" {
		return nil
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("squid said it accepts connections but %s refuses them: %v", addr, err)
		case <-tick.C:
		}
	}
}

// writeFiles writes squid.conf and what it names; it returns the
// configuration's path.
func (s *Squid) writeFiles(cfg SquidConfig) (string, error) {
	at := func(name string) string { return filepath.Join(s.Dir, name) }
	ct := cfg.ConnectTimeout
	if ct <= 0 {
		ct = 5 * time.Second
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	if cfg.Intercept != nil {
		if err := cfg.Intercept.WriteFiles(at("bump-ca.crt"), at("bump-ca.key")); err != nil {
			return "", err
		}
		db := at("ssl_db")
		if out, err := exec.Command("/usr/lib/squid/security_file_certgen", "-c", "-s", db, "-M", "4MB").CombinedOutput(); err != nil {
			return "", fmt.Errorf("squid certificate database: %v: %s", err, out)
		}
		w("http_port %s ssl-bump generate-host-certificates=on dynamic_cert_mem_cache_size=4MB tls-cert=%s tls-key=%s", s.Addr, at("bump-ca.crt"), at("bump-ca.key"))
		w("sslcrtd_program /usr/lib/squid/security_file_certgen -s %s -M 4MB", db)
		w("sslcrtd_children 2 startup=1 idle=1")
		w("acl step1 at_step SslBump1")
		w("ssl_bump peek step1")
		w("ssl_bump bump all")
		if cfg.UpstreamCAFile != "" {
			w("tls_outgoing_options cafile=%s", cfg.UpstreamCAFile)
		}
	} else {
		w("http_port %s", s.Addr)
	}
	w("visible_hostname pullpath-lab-proxy")
	w("pid_filename %s", at("squid.pid"))
	w("cache_log %s", at("cache.log"))
	w("access_log stdio:%s squid", at("access.log"))
	w("coredump_dir %s", s.Dir)
	for _, l := range []string{"netdb_filename none", "pinger_enable off", "icp_port 0", "htcp_port 0", "cache deny all", "cache_mem 8 MB", "logfile_rotate 0", "shutdown_lifetime 0 seconds"} {
		w("%s", l)
	}
	w("connect_timeout %d seconds", int(ct.Round(time.Second)/time.Second))
	if len(cfg.Hosts) > 0 {
		var hb strings.Builder
		names := make([]string, 0, len(cfg.Hosts))
		for n := range cfg.Hosts {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(&hb, "%s %s\n", cfg.Hosts[n], n)
		}
		if err := os.WriteFile(at("hosts"), []byte(hb.String()), 0o644); err != nil {
			return "", err
		}
		w("hosts_file %s", at("hosts"))
	} else {
		// hosts_file defaults to the /etc/hosts of squid's namespace
		w("hosts_file none")
	}
	if len(cfg.Nameservers) > 0 {
		w("dns_nameservers %s", strings.Join(cfg.Nameservers, " "))
	}
	w("acl CONNECT method CONNECT")
	if len(cfg.Users) > 0 {
		if err := writeHtpasswd(at("passwd"), cfg.Users); err != nil {
			return "", err
		}
		w("auth_param basic program /usr/lib/squid/basic_ncsa_auth %s", at("passwd"))
		w("auth_param basic realm pullpath-lab-proxy")
		w("acl authed proxy_auth REQUIRED")
		w("http_access deny !authed")
	}
	if len(cfg.Deny) > 0 {
		w("acl denied dstdomain %s", strings.Join(cfg.Deny, " "))
		w("http_access deny denied")
	}
	if len(cfg.Allow) > 0 {
		w("acl allowed dstdomain %s", strings.Join(cfg.Allow, " "))
		w("http_access allow allowed")
		w("http_access deny all")
	} else {
		w("http_access allow all")
	}
	conf := at("squid.conf")
	return conf, os.WriteFile(conf, []byte(b.String()), 0o644)
}

// writeHtpasswd writes an NCSA password file with apr1 hashes (openssl
// passwd -apr1, which basic_ncsa_auth reads).
func writeHtpasswd(path string, users map[string]string) error {
	var b strings.Builder
	names := make([]string, 0, len(users))
	for n := range users {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		cmd := exec.Command("openssl", "passwd", "-apr1", "-stdin")
		cmd.Stdin = strings.NewReader(users[n] + "\n")
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("squid password file: openssl passwd: %v", err)
		}
		fmt.Fprintf(&b, "%s:%s\n", n, strings.TrimSpace(string(out)))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// chownProxy gives dir to squid's user when running as root (squid drops
// to it), and makes it reachable.
func chownProxy(dir string) error {
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("proxy")
	if err != nil {
		return fmt.Errorf("squid runs as user proxy: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// serviceName is squid's -n for the instance in dir: letters and digits
// only (squid refuses anything else), unique per folder.
func serviceName(dir string) string {
	var b strings.Builder
	b.WriteString("pp")
	for _, r := range filepath.Base(dir) {
		if r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// freePort finds a free TCP port on host (inside netns when given).
func freePort(host, netns string) (int, error) {
	if netns != "" {
		return 3128, nil // a namespace of its own: the usual port is free
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("squid: no free port on %s: %v", host, err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Log is the last lines squid wrote to stderr, and how it ended when it
// did: for a failing test's output.
func (s *Squid) Log() string {
	s.logMu.Lock()
	out := strings.Join(s.logTail, "\n")
	s.logMu.Unlock()
	select {
	case <-s.done:
		out += fmt.Sprintf("\n(squid exited: %v)", s.werr)
	default:
	}
	return out
}

// AccessLog returns squid's access log so far: one line per request,
// with squid's result code (TCP_TUNNEL/200, TCP_DENIED/403, ...) and the
// destination.
func (s *Squid) AccessLog() (string, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, "access.log"))
	return string(b), err
}

// Close stops squid (it stops at once: shutdown_lifetime 0) and removes
// its folder.
func (s *Squid) Close() error {
	s.once.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			s.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
				s.cmd.Process.Kill()
				<-s.done
			}
		}
		os.RemoveAll(s.Dir)
	})
	return nil
}
