package lab

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/childproc"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/labsvc"
)

// The node's egress proxy: a real squid on the scenario's proxy host, and
// the node's own files that point at it (a containerd drop-in and/or
// /etc/environment in the node's view), plus the node's running
// containerd, started with the running environment before the probe so
// that the probe's discovery reads a real /proc/PID/environ.

// ProxyServeConfig is squid's part of a serve config: what `lab serve`
// starts (labsvc.StartSquid) in the proxy host's namespace.
type ProxyServeConfig struct {
	Listen      string            `json:"listen"`
	Hosts       map[string]string `json:"hosts,omitempty"`
	Nameservers []string          `json:"nameservers,omitempty"`
	Users       map[string]string `json:"users,omitempty"`
	Deny        []string          `json:"deny,omitempty"`
	Allow       []string          `json:"allow,omitempty"`
	// InterceptCert and InterceptKey are the inspection CA (ssl-bump);
	// UpstreamCAFile is the lab CA squid trusts toward the registry.
	InterceptCert  string `json:"interceptCert,omitempty"`
	InterceptKey   string `json:"interceptKey,omitempty"`
	UpstreamCAFile string `json:"upstreamCAFile,omitempty"`
	// DirFile receives squid's folder (its access.log is there).
	DirFile string `json:"dirFile"`
}

// startProxy starts squid in this namespace and records its folder.
func startProxy(ctx context.Context, c *ProxyServeConfig) (*labsvc.Squid, error) {
	sc := labsvc.SquidConfig{Listen: c.Listen, Hosts: c.Hosts, Nameservers: c.Nameservers, Users: c.Users,
		Deny: c.Deny, Allow: c.Allow, UpstreamCAFile: c.UpstreamCAFile}
	if c.InterceptCert != "" {
		ca, err := labsvc.LoadCA(c.InterceptCert, c.InterceptKey)
		if err != nil {
			return nil, fmt.Errorf("proxy inspection CA: %v", err)
		}
		sc.Intercept = ca
	}
	s, err := labsvc.StartSquid(ctx, sc)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(c.DirFile, []byte(s.Dir+"\n"), 0o644); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// proxyDirFile is where the proxy host's serve process records squid's
// folder.
func proxyDirFile(runDir string) string { return filepath.Join(runDir, "serve", "proxy.dir") }

// ProxyAccessLog is squid's access log so far (one line per request:
// TCP_TUNNEL/200 CONNECT HOST:443, TCP_DENIED/403, ...), "" and an error
// when the scenario runs no proxy.
func (e *Env) ProxyAccessLog() (string, error) {
	b, err := os.ReadFile(proxyDirFile(e.RunDir))
	if err != nil {
		return "", fmt.Errorf("no proxy runs in this lab: %v", err)
	}
	log, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(b)), "access.log"))
	return string(log), err
}

// removeProxyDir removes squid's folder when its serve process was killed
// before squid could remove it.
func removeProxyDir(runDir string) {
	b, err := os.ReadFile(proxyDirFile(runDir))
	if err != nil {
		return
	}
	if d := strings.TrimSpace(string(b)); strings.HasPrefix(filepath.Base(d), "pp-squid-") {
		os.RemoveAll(d)
	}
}

// prepareProxy adds squid to the proxy host's serve config, writes the
// node's proxy files into its view, adds a trusted inspection CA to the
// node's trust, and records the running containerd's environment.
func prepareProxy(t *scenario.Scenario, n *Network, runDir string, p *pki, env *Env, cfg func(host string) *ServeConfig) error {
	if px := t.Proxy; px != nil && px.Fault != "" {
		listen, err := t.ListenAddr(px.Host, px.Address, px.EffectivePort())
		if err != nil {
			return fmt.Errorf("proxy: %v", err)
		}
		cfg(px.Host).BadProxy = &labsvc.BadProxyConfig{Listen: listen, Fault: px.Fault}
	} else if px != nil && !px.Down {
		if why := labsvc.SquidAvailable(px.Intercept != ""); why != "" {
			return fmt.Errorf("proxy: %s", why)
		}
		listen, err := t.ListenAddr(px.Host, px.Address, px.EffectivePort())
		if err != nil {
			return fmt.Errorf("proxy: %v", err)
		}
		c := &ProxyServeConfig{Listen: listen, Hosts: px.Hosts, Nameservers: px.Nameservers, Deny: px.Deny, Allow: px.Allow,
			DirFile: proxyDirFile(runDir)}
		if len(c.Nameservers) == 0 {
			c.Nameservers = t.Node.Nameservers
		}
		if len(px.Users) > 0 {
			c.Users = map[string]string{}
			for _, u := range px.Users {
				c.Users[u.Name] = u.Password
			}
		}
		if px.Intercept != "" {
			ca, err := labsvc.NewCA("Lab Corp Squid TLS Inspection CA")
			if err != nil {
				return err
			}
			c.InterceptCert = filepath.Join(p.dir, "proxy-inspection-ca.crt")
			c.InterceptKey = filepath.Join(p.dir, "proxy-inspection-ca.key")
			if err := ca.WriteFiles(c.InterceptCert, c.InterceptKey); err != nil {
				return err
			}
			c.UpstreamCAFile = filepath.Join(p.dir, "proxy-upstream-ca.crt")
			if err := p.ca.WriteCAFile(c.UpstreamCAFile); err != nil {
				return err
			}
			if px.Intercept == "trusted" {
				if env.CAFile == "" {
					return fmt.Errorf("proxy.intercept: trusted needs node.trustLabCA (the node's CA file holds the inspection CA)")
				}
				if err := appendFile(env.CAFile, c.InterceptCert); err != nil {
					return err
				}
			}
		}
		cfg(px.Host).Proxy = c
	}
	np := t.Node.Proxy
	if np == nil {
		return nil
	}
	env.RuntimeEnv = np.RunningEnv()
	return WriteNodeProxyFiles(filepath.Join(netnsEtcDir, n.NS[t.Node.Host]), t.Name, t.Node.Proxy)
}

func appendFile(dst, src string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteNodeProxyFiles writes the node's view of its proxy settings np
// (scenario name's) under dir (/etc/netns/NODE-NAMESPACE, or a lab
// cluster node's etc folder): `ip netns exec` (or the cluster node's
// start script) bind-mounts each entry over /etc/ENTRY, so the drop-in
// needs a whole systemd folder (a copy of the machine's, without its
// containerd drop-ins), and /etc/environment is one file.
func WriteNodeProxyFiles(dir, name string, np *scenario.NodeProxy) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	sys := filepath.Join(dir, "systemd")
	if out, err := exec.Command("cp", "-a", "/etc/systemd", sys).CombinedOutput(); err != nil {
		return fmt.Errorf("node proxy files: copy /etc/systemd: %v: %s", err, strings.TrimSpace(string(out)))
	}
	dropDir := filepath.Join(dir, strings.TrimPrefix(filepath.Dir(scenario.ProxyDropInPath), "/etc/"))
	if err := os.RemoveAll(dropDir); err != nil {
		return err
	}
	if err := os.MkdirAll(dropDir, 0o755); err != nil {
		return err
	}
	if !haveUnit("containerd.service") {
		// The node's containerd unit, for a machine without Debian's
		// containerd package: discovery reads drop-ins of a unit that exists.
		unit := "[Unit]\nDescription=containerd container runtime\n\n[Service]\nExecStart=/usr/bin/containerd\n"
		if err := os.WriteFile(filepath.Join(sys, "system", "containerd.service"), []byte(unit), 0o644); err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(np.Env))
	for k := range np.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var drop strings.Builder
	fmt.Fprintf(&drop, "# the node's proxy for containerd (pullpath lab, scenario %s)\n[Service]\n", name)
	switch np.EffectiveSource() {
	case scenario.ProxySourceEtcEnv:
		var ee strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&ee, "%s=%s\n", k, np.Env[k])
		}
		if err := os.WriteFile(filepath.Join(dir, "environment"), []byte(ee.String()), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(&drop, "EnvironmentFile=%s\n", scenario.ProxyEtcEnvPath)
	default:
		for _, k := range keys {
			// systemd expands specifiers in Environment=: a literal % is %%
			fmt.Fprintf(&drop, "Environment=\"%s=%s\"\n", k, strings.ReplaceAll(np.Env[k], "%", "%%"))
		}
	}
	return os.WriteFile(filepath.Join(dropDir, filepath.Base(scenario.ProxyDropInPath)), []byte(drop.String()), 0o644)
}

func haveUnit(name string) bool {
	for _, d := range []string{"/etc/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system"} {
		if _, err := os.Stat(filepath.Join(d, name)); err == nil {
			return true
		}
	}
	return false
}

// nodeRuntime is the node's own containerd: started in the node's
// namespace with the running proxy environment before the probe, as on a
// real node (the probe reads its /proc/PID/environ). Its CRI plugin is
// off: it pulls nothing (the runtime hook starts a containerd of its own).
type nodeRuntime struct {
	proc *childproc.Proc
	dir  string
}

// startNodeRuntime starts containerd in ns with env (KEY=VALUE) and waits,
// bounded, until its socket accepts connections.
func startNodeRuntime(ctx context.Context, ns, runDir string, env []string, keep bool) (*nodeRuntime, error) {
	bin, err := exec.LookPath("containerd")
	if err != nil {
		return nil, fmt.Errorf("node.proxy: the node's running containerd needs Debian's containerd package: %v", err)
	}
	dir := filepath.Join(runDir, "nodectrd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	at := func(n string) string { return strconv.Quote(filepath.Join(dir, n)) }
	conf := strings.Join([]string{
		"# the lab node's running containerd (pullpath lab): no CRI, everything under " + dir,
		"version = 2",
		"root = " + at("root"),
		"state = " + at("state"),
		`disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]`,
		"[grpc]", "  address = " + at("c.sock"),
		"[ttrpc]", "  address = " + at("c.sock.ttrpc"),
		"[metrics]", `  address = ""`,
		"[plugins]", `  [plugins."io.containerd.internal.v1.opt"]`, "    path = " + at("opt"),
		"",
	}, "\n")
	cf := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	lf := filepath.Join(runDir, "logs", "node-containerd.log")
	p, err := childproc.StartLogged("the node's containerd", lf,
		[]string{"ip", "netns", "exec", ns, bin, "--config", cf},
		childproc.Options{Env: append(CleanEnv(), env...), Keep: keep})
	if err != nil {
		return nil, err
	}
	r := &nodeRuntime{proc: p, dir: dir}
	deadline := time.Now().Add(20 * time.Second)
	sock := filepath.Join(dir, "c.sock")
	for {
		if c, err := net.DialTimeout("unix", sock, time.Second); err == nil {
			c.Close()
			return r, nil
		}
		select {
		case <-p.Done():
			return nil, fmt.Errorf("the node's containerd exited: %s", childproc.LastLines(lf, 2))
		case <-ctx.Done():
			r.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.stop()
			return nil, fmt.Errorf("the node's containerd: no socket after 20s: %s", childproc.LastLines(lf, 2))
		}
	}
}

func (r *nodeRuntime) stop() {
	if r == nil {
		return
	}
	r.proc.Stop(3 * time.Second)
	// its snapshots' mounts live under root: unmount before removing
	exec.Command("umount", "-R", filepath.Join(r.dir, "root")).Run()
	os.RemoveAll(r.dir)
}

var _ io.Closer = (*labsvc.Squid)(nil)
