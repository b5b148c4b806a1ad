package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ErrClusterBinaries is wrapped by StartCluster's error when a binary the
// cluster needs is missing. Under CI=true tests must fail on it, not skip.
var ErrClusterBinaries = errors.New("lab cluster binaries missing (build them with `bash hack/controlplane.sh`; containerd, runc and the CNI plugins come from Debian's containerd and containernetworking-plugins packages)")

// ClusterBinDirEnv overrides where StartCluster looks for etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and
// pause (the same variable as internal/testenv/controlplane).
const ClusterBinDirEnv = "PULLPATH_CONTROLPLANE_BIN"

// ClusterOptions tune StartCluster.
type ClusterOptions struct {
	// BinDir holds the Kubernetes binaries and pause (hack/controlplane.sh).
	// Default: $PULLPATH_CONTROLPLANE_BIN, else test/controlplane/bin of
	// the first folder above the working directory that holds a go.mod.
	BinDir string
	// Self is the pullpath binary re-executed for `lab serve` (and, with
	// Keep, `lab forward`); default os.Executable().
	Self string
	// Keep leaves everything running when this process exits (lab up):
	// the apiserver forwarder then runs as its own process.
	Keep bool
	// Progress receives one line per phase.
	Progress io.Writer
	// ReadyTimeout bounds the wait for each node to be Ready (default 60s).
	ReadyTimeout time.Duration
	// KubeletArgs are extra kubelet flags for every node, e.g.
	// --image-credential-provider-config and --image-credential-provider-bin-dir
	// for a credential provider that NodeSetup put in place.
	KubeletArgs []string
	// NodeSetup, when set, runs for each node after the lab wrote its files
	// and before containerd and the kubelet start. dir is NodeDir(host):
	// dir/var-lib is the node's /var/lib (its kubelet reads
	// /var/lib/kubelet/config.json), dir/certs.d its containerd's certs.d.
	NodeSetup func(host, dir string) error
}

// Cluster is a running lab with a real control plane and real kubelets.
// Every method is safe to call from tests in other packages; Close tears
// everything down (processes, namespaces, mounts, cgroups) and may be
// called more than once.
type Cluster struct {
	// Prefix is the run's name prefix ("ppl1a2b3c-"); RunDir its folder.
	Prefix, RunDir string
	// Kubeconfig is an admin kubeconfig (client certificate in
	// system:masters) for https://127.0.0.1:PORT, a loopback forwarder in
	// the root namespace into the control plane's namespace.
	Kubeconfig string
	// Config is the same as a client-go configuration; Client a clientset.
	Config *rest.Config
	Client kubernetes.Interface
	// Env is the lab around the cluster (registry, DNS, the probe's node).
	Env *Env
	// Server is https://127.0.0.1:PORT.
	Server string

	topo        *Topology
	o           ClusterOptions
	sess        *Session
	net         *Network
	svcs        *services
	env         *Env
	pki         *clusterPKI
	bin         string
	runDir      string
	dir         string // RUN/cluster
	keep        bool
	apiserverIP netip.Addr
	adminCert   string
	adminKey    string
	pauseTar    string
	fwd         *Forwarder
	fwdProc     *clusterProc

	mu     sync.Mutex
	procs  []*clusterProc
	nodes  map[string]*clusterNode // started nodes by host
	order  []string                // started hosts in creation order
	images []string                // tarballs imported into every node

	closeOnce sync.Once
	closeErr  error
}

// clusterBinaries are the files StartCluster needs from BinDir.
var clusterBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "pause"}

// ResolveClusterBinDir applies ClusterOptions.BinDir's defaults and checks
// that every binary is there (and the machine's containerd, runc, ctr,
// nsenter, unshare and CNI plugins); the error wraps ErrClusterBinaries.
func ResolveClusterBinDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv(ClusterBinDirEnv)
	}
	if dir == "" {
		wd, _ := os.Getwd()
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = filepath.Join(d, "test", "controlplane", "bin")
				break
			}
			if filepath.Dir(d) == d {
				return "", fmt.Errorf("%w: no go.mod above %s to find test/controlplane/bin from; set %s", ErrClusterBinaries, wd, ClusterBinDirEnv)
			}
		}
	}
	for _, b := range clusterBinaries {
		if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: %s is missing", ErrClusterBinaries, filepath.Join(dir, b))
		}
	}
	for _, tool := range []string{"containerd", "ctr", "runc", "nsenter", "unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("%w: %s is not in PATH", ErrClusterBinaries, tool)
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join("/usr/lib/cni", p)); err != nil {
			return "", fmt.Errorf("%w: CNI plugin /usr/lib/cni/%s is missing (apt-get install containernetworking-plugins)", ErrClusterBinaries, p)
		}
	}
	return dir, nil
}

func (c *Cluster) logf(format string, a ...any) {
	if c.o.Progress != nil {
		fmt.Fprintf(c.o.Progress, c.topo.Name+": "+format+"\n", a...)
	}
}

// StartCluster builds the scenario's network, starts its services (DNS,
// registry, token and blob hosts), then the control plane in
// cluster.controlPlane's namespace and a containerd and kubelet for every
// node that is not `later`, and returns when all of them are Ready. On
// error everything it started is torn down.
func StartCluster(ctx context.Context, t *Topology, o ClusterOptions) (cl *Cluster, err error) {
	if err := needLinux(); err != nil {
		return nil, err
	}
	if t.Cluster == nil {
		return nil, fmt.Errorf("scenario %s has no cluster section", t.Name)
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %s: %v", t.Name, err)
	}
	bin, err := ResolveClusterBinDir(o.BinDir)
	if err != nil {
		return nil, err
	}
	self := o.Self
	if self == "" {
		if self, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	c := &Cluster{topo: t, o: o, bin: bin, keep: o.Keep, nodes: map[string]*clusterNode{}}
	c.sess, err = NewSession(ctx)
	if err != nil {
		return nil, err
	}
	c.Prefix, c.RunDir, c.runDir = c.sess.Prefix, c.sess.RunDir, c.sess.RunDir
	c.dir = filepath.Join(c.runDir, "cluster")
	defer func() {
		if err != nil {
			c.Close()
			cl = nil
		}
	}()
	start := time.Now()
	c.logf("building %d namespaces (prefix %s)", len(t.Hosts), c.Prefix)
	if c.net, err = Build(ctx, t, c.Prefix); err == nil {
		err = c.net.Verify(ctx)
	}
	if err != nil {
		return nil, err
	}
	if _, err = c.net.WriteNodeFiles(); err != nil {
		return nil, err
	}
	t.binDir = bin
	env, configs, err := prepare(ctx, t, c.net, c.runDir)
	if err != nil {
		return nil, err
	}
	env.Self = self
	c.env, c.Env = env, env
	if c.svcs, err = startServices(ctx, c.net, self, c.runDir, configs, o.Keep); err != nil {
		return nil, err
	}
	if err = c.net.WaitLinks(ctx); err != nil {
		return nil, err
	}
	c.logf("network and services up in %s", time.Since(start).Round(time.Millisecond))
	if err = os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, err
	}
	if c.pki, err = newClusterPKI(filepath.Join(c.dir, "pki")); err != nil {
		return nil, err
	}
	c.apiserverIP = t.hostAddrs(t.Cluster.ControlPlane)[0]
	if c.pauseTar, err = writeSandboxImage(filepath.Join(bin, "pause"), filepath.Join(c.dir, "pause.tar")); err != nil {
		return nil, err
	}
	if err = c.startControlPlane(ctx); err != nil {
		return nil, err
	}
	c.logf("control plane ready in %s", time.Since(start).Round(time.Millisecond))
	if err = c.startForwarder(ctx, self); err != nil {
		return nil, err
	}
	var first []string
	for _, h := range t.Cluster.ClusterOrder() {
		if !t.Cluster.Nodes[h].Later {
			first = append(first, h)
		}
	}
	for _, h := range first {
		if err = c.startNode(ctx, h); err != nil {
			return nil, err
		}
	}
	for _, h := range first {
		if err = c.WaitReady(ctx, h); err != nil {
			return nil, err
		}
	}
	c.logf("%d nodes Ready in %s", len(first), time.Since(start).Round(time.Millisecond))
	if o.Keep {
		if c.svcs != nil {
			c.svcs.detach()
		}
		for _, p := range c.procs {
			p.cmd.Process.Release()
		}
		k := &KeptRun{Name: t.Name, Source: t.Source(), NodeNS: c.net.NS[t.Node.Host], Namespace: c.net.NS, Started: start.UTC(),
			Kubeconfig: c.Kubeconfig, Nodes: c.NodeNames()}
		if err = c.sess.Keep(k); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// startForwarder opens the loopback forwarder into the control plane's
// namespace and writes the admin kubeconfig for it.
func (c *Cluster) startForwarder(ctx context.Context, self string) error {
	ns := c.net.NS[c.topo.Cluster.ControlPlane]
	target := fmt.Sprintf("%s:%d", c.apiserverIP, apiserverPort)
	addr := ""
	if c.keep {
		ready := filepath.Join(c.dir, "forward.addr")
		p, err := startProc("forward", filepath.Join(c.runDir, "logs", "forward.log"), true,
			self, "lab", "forward", "--netns", ns, "--to", target, "--listen", "127.0.0.1:0", "--ready", ready)
		if err != nil {
			return err
		}
		c.fwdProc = p
		c.procs = append(c.procs, p)
		deadline := time.Now().Add(10 * time.Second)
		for {
			if b, err := os.ReadFile(ready); err == nil && strings.Contains(string(b), "\n") {
				addr = strings.TrimSpace(string(b))
				break
			}
			if p.exited() || time.Now().After(deadline) {
				return fmt.Errorf("apiserver forwarder did not start: %s", lastLines(p.log, 2))
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	} else {
		f, err := Forward(ns, "127.0.0.1:0", target)
		if err != nil {
			return err
		}
		c.fwd, addr = f, f.Addr
	}
	c.Server = "https://" + addr
	c.Kubeconfig = filepath.Join(c.dir, "admin.kubeconfig")
	if err := writeClientKubeconfig(c.Kubeconfig, c.Server, c.pki.CAFile, c.adminCert, c.adminKey); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100
	c.Config = cfg
	c.Client, err = kubernetes.NewForConfig(cfg)
	return err
}

// startNode creates the node's cgroup root and files and runs its start
// script in a new mount and UTS namespace inside its network namespace.
func (c *Cluster) startNode(ctx context.Context, host string) error {
	t := c.topo
	idx := 0
	for i, h := range t.Cluster.ClusterOrder() {
		if h == host {
			idx = i
		}
	}
	n := &clusterNode{host: host, name: t.nodeName(host), ip: t.hostAddrs(host)[0], podCIDR: t.Cluster.nodePodCIDR(idx),
		dir: filepath.Join(c.runDir, "nodes", host), cgroup: "/" + cgroupParent + "/" + c.Prefix + host}
	g, err := lockFile(filepath.Join(StateDir, ".lock"), true)
	if err != nil {
		return err
	}
	err = makeNodeCgroup(c.Prefix + host)
	g.Close()
	if err != nil {
		return err
	}
	if err := c.writeNodeFiles(n); err != nil {
		return fmt.Errorf("node %s: %v", host, err)
	}
	if c.o.NodeSetup != nil {
		if err := c.o.NodeSetup(host, n.dir); err != nil {
			return fmt.Errorf("node %s setup: %v", host, err)
		}
	}
	c.mu.Lock()
	imgs := append([]string(nil), c.images...)
	c.mu.Unlock()
	if err := os.WriteFile(filepath.Join(n.dir, "images.list"), []byte(strings.Join(imgs, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	p, err := startProc("node "+host, filepath.Join(c.runDir, "logs", host+"-start.log"), c.keep,
		"nsenter", "--net="+filepath.Join(netnsRunDir, c.net.NS[host]), "--",
		"unshare", "--mount", "--uts", "--propagation", "slave", "--", "sh", filepath.Join(n.dir, "start.sh"))
	if err != nil {
		return err
	}
	n.proc = p
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.nodes[host] = n
	c.order = append(c.order, host)
	c.mu.Unlock()
	c.logf("node %s (%s, %s) starting", n.name, host, n.ip)
	return nil
}

func (c *Cluster) node(host string) (*clusterNode, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[host]
	if n == nil {
		return nil, fmt.Errorf("node host %q is not running (running: %s)", host, strings.Join(c.order, ", "))
	}
	return n, nil
}

// WaitReady waits (ReadyTimeout, default 60s) until the node of host is
// Ready, and fails early if its kubelet exits.
func (c *Cluster) WaitReady(ctx context.Context, host string) error {
	n, err := c.node(host)
	if err != nil {
		return err
	}
	timeout := c.o.ReadyTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	deadline := time.Now().Add(timeout)
	last := "not registered"
	for {
		node, err := c.Client.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
		if err == nil {
			last = "no Ready condition"
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady {
					if cond.Status == corev1.ConditionTrue {
						return nil
					}
					last = cond.Reason + ": " + cond.Message
				}
			}
		}
		if n.proc.exited() {
			return fmt.Errorf("node %s: kubelet exited: %s | %s", host, lastLines(n.proc.log, 3),
				lastLines(filepath.Join(c.runDir, "logs", host+"-kubelet.log"), 3))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s (%s) not Ready after %s: %s; kubelet log: %s", host, n.name, timeout, oneLine(last),
				lastLines(filepath.Join(c.runDir, "logs", host+"-kubelet.log"), 3))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// NodeNames lists the Kubernetes names of the running nodes, in creation
// order.
func (c *Cluster) NodeNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.order))
	for _, h := range c.order {
		out = append(out, c.nodes[h].name)
	}
	return out
}

// NodeName is the Kubernetes name of a node host (running or later).
func (c *Cluster) NodeName(host string) string {
	if c.topo.Cluster.Nodes[host] == nil {
		return ""
	}
	return c.topo.nodeName(host)
}

// Hosts lists the running node hosts in creation order.
func (c *Cluster) Hosts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.order...)
}

// NodeDir is the folder of a node host: var-lib is its /var/lib, var-log its
// /var/log, certs.d its containerd's certs.d, kubelet.yaml its kubelet's
// configuration.
func (c *Cluster) NodeDir(host string) string { return filepath.Join(c.runDir, "nodes", host) }

// Namespace is the network namespace of a host.
func (c *Cluster) Namespace(host string) string { return c.net.NS[host] }

// Topology is the scenario the cluster runs.
func (c *Cluster) Topology() *Topology { return c.topo }

// Exec returns a command that runs argv inside the node's network, mount
// and UTS namespaces (its resolv.conf, hosts, /var/lib/kubelet, ...), with
// a clean environment.
func (c *Cluster) Exec(ctx context.Context, host string, argv ...string) (*exec.Cmd, error) {
	n, err := c.node(host)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(n.dir, "containerd.pid"))
	if err != nil {
		return nil, fmt.Errorf("node %s: containerd has not started yet", host)
	}
	pid := strings.TrimSpace(string(b))
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"--target", pid, "--net", "--mount", "--uts", "--"}, argv...)...)
	cmd.Env = cleanEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	return cmd, nil
}

// StopKubelet kills the node's kubelet (its containers keep running, as
// after a kubelet crash); the node goes NotReady about 16 s later. Use
// StartKubelet to bring it back.
func (c *Cluster) StopKubelet(ctx context.Context, host string) error {
	n, err := c.node(host)
	if err != nil {
		return err
	}
	// the kubelet only: containerd shares its process group
	if n.proc.cmd.Process != nil {
		syscall.Kill(n.proc.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-n.proc.done:
		case <-time.After(5 * time.Second):
			return fmt.Errorf("node %s: the kubelet did not exit after SIGKILL", host)
		}
	}
	return nil
}

// StartKubelet starts the node's kubelet again after StopKubelet, in the
// node's namespaces, and waits until the node is Ready.
func (c *Cluster) StartKubelet(ctx context.Context, host string) error {
	n, err := c.node(host)
	if err != nil {
		return err
	}
	if !n.proc.exited() {
		return fmt.Errorf("node %s: the kubelet is running", host)
	}
	b, err := os.ReadFile(filepath.Join(n.dir, "containerd.pid"))
	if err != nil {
		return err
	}
	p, err := startProc("kubelet "+host, filepath.Join(c.runDir, "logs", host+"-start.log"), c.keep,
		"nsenter", "--target", strings.TrimSpace(string(b)), "--net", "--mount", "--uts", "--", "sh", filepath.Join(n.dir, "kubelet.sh"))
	if err != nil {
		return err
	}
	c.mu.Lock()
	n.proc = p
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return c.WaitReady(ctx, host)
}

// Cordon marks the node unschedulable (kubectl cordon).
func (c *Cluster) Cordon(ctx context.Context, host string) error {
	name := c.NodeName(host)
	if name == "" {
		return fmt.Errorf("cordon: %q is not a node host", host)
	}
	_, err := c.Client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{})
	return err
}

// AddNode starts a node that the topology marks `later` (the scale-up:
// created after the others, so its creationTimestamp is the newest) and
// waits until it is Ready. Images given to ImportImage are imported first.
func (c *Cluster) AddNode(ctx context.Context, host string) error {
	spec := c.topo.Cluster.Nodes[host]
	if spec == nil {
		return fmt.Errorf("add node: %q is not a node host of scenario %s", host, c.topo.Name)
	}
	if _, err := c.node(host); err == nil {
		return fmt.Errorf("add node: %s is already running", host)
	}
	if err := c.startNode(ctx, host); err != nil {
		return err
	}
	return c.WaitReady(ctx, host)
}

// Route changes one route of a host's table (the repair, or the break):
// action is add, del or replace, as `ip route`.
func (c *Cluster) Route(ctx context.Context, host, action string, r Route) error {
	ns, ok := c.net.NS[host]
	if !ok {
		return fmt.Errorf("route: no such host %q", host)
	}
	switch action {
	case "add", "del", "replace":
	default:
		return fmt.Errorf("route: action %q, want add, del or replace", action)
	}
	dests, err := parseDest(r.To)
	if err != nil {
		return fmt.Errorf("route to %q: %v", r.To, err)
	}
	var lines []string
	for _, d := range dests {
		switch {
		case r.Type != "":
			lines = append(lines, fmt.Sprintf("route %s %s %s", action, r.Type, d))
		case r.Via != "":
			lines = append(lines, fmt.Sprintf("route %s %s via %s", action, d, r.Via))
		default:
			lines = append(lines, fmt.Sprintf("route %s %s", action, d))
		}
	}
	return ipBatch(ctx, ns, lines)
}

// ImportImage imports an OCI or Docker image tarball (as `ctr images
// import` reads it: e.g. go-containerregistry's tarball.WriteToFile) into
// the containerd of every running node, and of every node AddNode starts
// later. The image keeps the name(s) in the tarball; pods that use it with
// imagePullPolicy IfNotPresent never pull it. Its config must name this
// machine's os and architecture (ctr drops other platforms).
func (c *Cluster) ImportImage(ctx context.Context, tarPath string) error {
	abs, err := filepath.Abs(tarPath)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("import image: %v", err)
	}
	c.mu.Lock()
	c.images = append(c.images, abs)
	hosts := append([]string(nil), c.order...)
	c.mu.Unlock()
	for _, h := range hosts {
		n, _ := c.node(h)
		ictx, cancel := context.WithTimeout(ctx, 60*time.Second)
		cmd := exec.CommandContext(ictx, "ctr", "-a", n.sock(), "-n", "k8s.io", "images", "import", "--snapshotter", "overlayfs", abs)
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			hint := ""
			if strings.Contains(string(out), "filtered out") {
				hint = " (ctr keeps only images for this machine's platform: set os and architecture in the image's config)"
			}
			return fmt.Errorf("import %s into node %s: %v: %s%s", filepath.Base(abs), h, err, oneLine(string(out)), hint)
		}
	}
	return nil
}

// Logs is where the run's logs are: etcd.log, kube-apiserver.log, HOST-kubelet.log,
// HOST-containerd.log, ...
func (c *Cluster) Logs() string { return filepath.Join(c.runDir, "logs") }

// Close stops every process, deletes every namespace, mount and cgroup of
// the run and its folder. With Keep it does nothing: `lab down` does it.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		if c.keep && c.Kubeconfig != "" && c.sess != nil && c.sess.lock == nil {
			return // kept by lab up
		}
		if c.fwd != nil {
			c.fwd.Close()
		}
		c.mu.Lock()
		procs := append([]*clusterProc(nil), c.procs...)
		c.mu.Unlock()
		// nodes first (kubelets, containerd), then the control plane
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].kill()
		}
		c.svcs.stop()
		if c.sess != nil {
			c.closeErr = c.sess.Close()
		}
	})
	return c.closeErr
}

// pidOf reads a pid file.
func pidOf(file string) int {
	b, _ := os.ReadFile(file)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// SaveLogs copies the run's logs to ROOT/pullpath-lab-NAME-PREFIX (ROOT
// default os.TempDir()) before a teardown removes them, and returns where.
func (c *Cluster) SaveLogs(root string) string {
	return keepLogs(c.RunDir, root, c.topo.Name, c.Prefix)
}
