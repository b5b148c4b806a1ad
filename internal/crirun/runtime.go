package crirun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options configures one containerd run inside a node namespace.
type Options struct {
	// Netns is the node namespace (must exist under /run/netns);
	// containerd is started with `ip netns exec NETNS containerd --config FILE`.
	Netns string
	// WorkDir is a private folder for root, state, sockets and config. It
	// must not exist yet or be empty: Stop removes it whole.
	WorkDir string
	// CertsDir is the node's certs.d (containerd's registry config_path).
	// Empty means an empty folder inside WorkDir, so the machine's own
	// /etc/containerd/certs.d is never read.
	CertsDir string
	// Crictl is the path of crictl; default: PATH, then $(go env GOPATH)/bin.
	Crictl string
	// Containerd is the containerd binary; default: PATH.
	Containerd string
	// Log receives containerd's own log (stdout and stderr).
	Log io.Writer
	// Debug runs containerd with --log-level debug: its resolver and
	// fetcher then log every request to every host ("do request" with the
	// URL, "fetch response received" with the status), which is how a lab
	// hook learns which host of a mirror chain served.
	Debug bool
	// StartTimeout bounds the wait for containerd's socket and CRI image
	// service; default DefaultStartTimeout.
	StartTimeout time.Duration
	// ConfigFile, when set, is the node's own containerd config, a node
	// path under NodeRoot: containerd starts as k3s starts its embedded
	// one (-c FILE with --address, --root and --state into WorkDir), in
	// the node's network namespace and a private mount namespace where
	// NodeRoot's etc and var/lib lie over the machine's (nodeArgv), so the
	// config's paths are the node's files. CertsDir is then unused.
	ConfigFile string
	NodeRoot   string
	// Env is added to containerd's otherwise clean environment (KEY=VALUE):
	// the node's proxy variables, which its CRI pull follows
	// (http.ProxyFromEnvironment), as systemd would give them.
	Env []string
}

// DefaultStartTimeout bounds Start's wait for containerd to serve CRI.
const DefaultStartTimeout = 30 * time.Second

// stopGrace is how long Stop waits after SIGTERM before SIGKILL.
const stopGrace = 5 * time.Second

// Runtime is one containerd process serving CRI on a private socket.
type Runtime struct {
	o       Options
	l       layout
	crictl  string
	ctr     string
	version string

	cmd     *exec.Cmd
	done    chan struct{} // closed when the process has been waited for
	waitErr error
	tail    *tailBuffer

	stopOnce sync.Once
	stopErr  error
}

// cleanPath is the only environment containerd and its clients get: no
// proxy variables (containerd gets only those of Options.Env), no
// inherited DOCKER_CONFIG or CONTAINERD_* settings.
const cleanPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Start writes the config, starts containerd inside o.Netns and waits,
// bounded, until its CRI image service answers. On error nothing is left
// running and WorkDir is removed.
func Start(ctx context.Context, o Options) (*Runtime, error) {
	if err := needLinux(); err != nil {
		return nil, err
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	l := newLayout(filepath.Clean(o.WorkDir))
	r := &Runtime{o: o, l: l, tail: &tailBuffer{max: 8 << 10}}

	containerd := o.Containerd
	if containerd == "" {
		containerd = "containerd"
	}
	var err error
	if containerd, err = exec.LookPath(containerd); err != nil {
		return nil, fmt.Errorf("crirun: containerd binary %q not found (install Debian's containerd package): %w", o.Containerd, err)
	}
	if r.ctr, err = lookBeside(containerd, "ctr"); err != nil {
		return nil, err
	}
	ipBin, err := exec.LookPath("ip")
	if err != nil {
		return nil, fmt.Errorf("crirun: ip (iproute2) not found: %w", err)
	}
	if r.crictl, err = findCrictl(o.Crictl); err != nil {
		return nil, err
	}
	if r.version, err = containerdVersion(ctx, containerd); err != nil {
		return nil, err
	}

	if o.ConfigFile != "" {
		return r.startNode(ctx, containerd)
	}
	certs := o.CertsDir
	if certs == "" {
		certs = filepath.Join(l.dir, "certs.d")
		if err := os.MkdirAll(certs, 0o700); err != nil {
			return nil, fmt.Errorf("crirun: create %s: %w", certs, err)
		}
	}
	if err := l.prepare(certs); err != nil {
		_ = os.RemoveAll(l.dir)
		return nil, err
	}

	argv := []string{"netns", "exec", o.Netns, containerd, "--config", l.config}
	if o.Debug {
		argv = append(argv, "--log-level", "debug")
	}
	return r.run(ctx, exec.Command(ipBin, argv...))
}

// run starts cmd (containerd, exec'd in place by its wrappers) and waits
// until it serves CRI.
func (r *Runtime) run(ctx context.Context, cmd *exec.Cmd) (*Runtime, error) {
	o, l := r.o, r.l
	var logw io.Writer = r.tail
	if o.Log != nil {
		logw = io.MultiWriter(o.Log, r.tail)
	}
	cmd.Env = append([]string{cleanPath, "TMPDIR=" + l.dir}, o.Env...)
	cmd.Dir = l.dir
	cmd.Stdout = logw
	cmd.Stderr = logw
	cmd.WaitDelay = 2 * time.Second
	// Its own process group (a terminal's Ctrl-C reaches us, and we stop
	// it in order); killed with us if we die without Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(l.dir)
		return nil, fmt.Errorf("crirun: start containerd in netns %s: %w", o.Netns, err)
	}
	r.cmd = cmd
	r.done = make(chan struct{})
	go func() {
		r.waitErr = cmd.Wait()
		close(r.done)
	}()

	timeout := o.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := r.waitReady(wctx); err != nil {
		_ = r.Stop()
		return nil, err
	}
	return r, nil
}

func (o Options) validate() error {
	if o.Netns == "" || strings.ContainsAny(o.Netns, "/\x00") || o.Netns == "." || o.Netns == ".." {
		return fmt.Errorf("crirun: network namespace name %q, want the name of a namespace under /run/netns", o.Netns)
	}
	for _, kv := range o.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.ContainsRune(kv, 0) {
			return fmt.Errorf("crirun: environment entry %q, want KEY=VALUE", kv)
		}
	}
	if err := checkPath("work folder", o.WorkDir); err != nil {
		return err
	}
	wd := filepath.Clean(o.WorkDir)
	if wd == "/" || len(strings.Split(strings.Trim(wd, "/"), "/")) < 2 {
		return fmt.Errorf("crirun: work folder %q is too close to / (Stop removes it), want a private folder such as /tmp/lab-x/containerd", o.WorkDir)
	}
	if n := len(newLayout(wd).ttrpc); n > maxSocketPath {
		return fmt.Errorf("crirun: work folder %q is too long for a unix socket path (%d > %d bytes), want a shorter one", o.WorkDir, n, maxSocketPath)
	}
	if ents, err := os.ReadDir(wd); err == nil && len(ents) > 0 {
		return fmt.Errorf("crirun: work folder %q is not empty, want a new or empty folder (Stop removes it)", o.WorkDir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("crirun: work folder %q: %w", o.WorkDir, err)
	}
	if o.CertsDir != "" {
		if err := checkPath("certs.d folder", o.CertsDir); err != nil {
			return err
		}
		if st, err := os.Stat(o.CertsDir); err != nil || !st.IsDir() {
			return fmt.Errorf("crirun: certs.d folder %q is not a directory", o.CertsDir)
		}
	}
	if _, err := os.Stat(filepath.Join("/run/netns", o.Netns)); err != nil {
		return fmt.Errorf("crirun: network namespace %q does not exist (want one made by `ip netns add`): %w", o.Netns, err)
	}
	return nil
}

// waitReady polls for the socket, then for the CRI image service.
func (r *Runtime) waitReady(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-r.done:
			return fmt.Errorf("crirun: containerd exited during start (%v); its log ends: %s", r.waitErr, r.tail.lastLines(5))
		case <-ctx.Done():
			return fmt.Errorf("crirun: containerd did not serve CRI on %s in time (%v); last check: %v; its log ends: %s", r.l.sock, ctx.Err(), last, r.tail.lastLines(5))
		case <-tick.C:
		}
		c, err := net.DialTimeout("unix", r.l.sock, time.Second)
		if err != nil {
			last = err
			continue
		}
		_ = c.Close()
		// The socket answers; the CRI plugin may still be loading.
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		out, err := r.crictlCmd(cctx, nil, "images", "-q").CombinedOutput()
		cancel()
		if err == nil {
			return nil
		}
		last = fmt.Errorf("crictl images: %v: %s", err, strings.TrimSpace(lastLine(string(out))))
	}
}

// Version is containerd's version, such as "containerd 1.6.20".
func (r *Runtime) Version() string { return r.version }

// Socket is the path of containerd's gRPC socket.
func (r *Runtime) Socket() string { return r.l.sock }

// Pid is containerd's process id (ip netns exec execs it in place).
func (r *Runtime) Pid() int {
	if r.cmd == nil || r.cmd.Process == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// Stop kills containerd (SIGTERM, then SIGKILL after a grace period) and
// anything else whose command line names WorkDir (shims), unmounts what is
// mounted under WorkDir and removes it. It is idempotent.
func (r *Runtime) Stop() error {
	r.stopOnce.Do(func() {
		var errs []error
		if r.cmd != nil && r.cmd.Process != nil {
			select {
			case <-r.done:
			default:
				_ = r.cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-r.done:
				case <-time.After(stopGrace):
					_ = r.cmd.Process.Kill()
					select {
					case <-r.done:
					case <-time.After(5 * time.Second):
						errs = append(errs, fmt.Errorf("crirun: containerd (pid %d) did not exit after SIGKILL", r.cmd.Process.Pid))
					}
				}
			}
		}
		if err := Cleanup(r.l.dir); err != nil {
			errs = append(errs, err)
		}
		r.stopErr = errors.Join(errs...)
	})
	return r.stopErr
}

// containerdVersion turns "containerd github.com/containerd/containerd
// 1.6.20~ds1 1.6.20~ds1-1+deb12u3" into "containerd 1.6.20".
func containerdVersion(ctx context.Context, bin string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, "--version")
	cmd.Env = []string{cleanPath}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("crirun: %s --version: %w", bin, err)
	}
	v, err := parseVersion(string(out))
	if err != nil {
		return "", fmt.Errorf("crirun: %s --version: %w", bin, err)
	}
	return v, nil
}

func parseVersion(out string) (string, error) {
	f := strings.Fields(out)
	if len(f) < 3 || f[0] != "containerd" {
		return "", fmt.Errorf("unexpected output %q, want \"containerd PACKAGE VERSION ...\"", strings.TrimSpace(out))
	}
	v := strings.TrimPrefix(f[2], "v")
	if i := strings.IndexAny(v, "~+-"); i > 0 {
		v = v[:i]
	}
	return "containerd " + v, nil
}

// lookBeside finds name next to bin, then in PATH.
func lookBeside(bin, name string) (string, error) {
	p := filepath.Join(filepath.Dir(bin), name)
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("crirun: %s not found beside %s or in PATH: %w", name, bin, err)
	}
	return p, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(t.b), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 || len(lines[0]) == 0 {
		return "(empty)"
	}
	return string(bytes.Join(lines, []byte(" | ")))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
