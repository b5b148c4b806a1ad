// Package cluster runs a lab scenario's cluster section: a real control
// plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler) in
// one host's network namespace and a real containerd, kubelet and
// kube-proxy (proxy.go) per node host, each node in its own network, mount
// and UTS namespaces and cgroup root, on the network internal/lab builds.
// It is the lab's only Kubernetes client.
//
// Start returns a running Cluster that tests drive through its Go API
// (labtest.Require wraps it); Run is the runner `pullpath lab run|test|up`
// uses for a cluster scenario (lab.Options.Cluster).
package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
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

	"github.com/pullpath/pullpath/internal/childproc"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/units"
)

// ErrBinaries is wrapped by Start's error when a binary the cluster needs
// is missing. Under CI=true tests must fail on it, not skip.
var ErrBinaries = errors.New("lab cluster binaries missing (build them with `bash hack/controlplane.sh`; containerd, runc and the CNI plugins come from Debian's containerd and containernetworking-plugins packages)")

// Options tune Start.
type Options struct {
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
	Env *lab.Env
	// Server is https://127.0.0.1:PORT.
	Server string

	scen        *scenario.Scenario
	o           Options
	lab         *lab.Lab
	kept        *lab.KeptRun // set once Start kept the run (lab up)
	pki         *clusterPKI
	bin         string
	dir         string // RUN/cluster
	apiserverIP netip.Addr
	adminCert   string
	adminKey    string
	pauseTar    string
	fwd         *lab.Forwarder

	mu     sync.Mutex
	procs  []*childproc.Proc
	nodes  map[string]*clusterNode // started nodes by host
	order  []string                // started hosts in creation order
	images []string                // tarballs imported into every node

	closeOnce sync.Once
	closeErr  error
}

// clusterBinaries are the files StartCluster needs from BinDir.
var clusterBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy", "pause"}

// ResolveBinDir applies Options.BinDir's defaults and checks that every
// binary is there (and the machine's containerd, runc, ctr, nsenter,
// unshare and CNI plugins); the error wraps ErrBinaries.
func ResolveBinDir(dir string) (string, error) {
	dir, err := childproc.BinDir(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBinaries, err)
	}
	if missing := childproc.MissingBinary(dir, clusterBinaries...); missing != "" {
		return "", fmt.Errorf("%w: %s is missing", ErrBinaries, missing)
	}
	for _, tool := range []string{"containerd", "ctr", "runc", "nsenter", "unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("%w: %s is not in PATH", ErrBinaries, tool)
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join("/usr/lib/cni", p)); err != nil {
			return "", fmt.Errorf("%w: CNI plugin /usr/lib/cni/%s is missing (apt-get install containernetworking-plugins)", ErrBinaries, p)
		}
	}
	return dir, nil
}

func (c *Cluster) logf(format string, a ...any) {
	if c.o.Progress != nil {
		fmt.Fprintf(c.o.Progress, c.scen.Name+": "+format+"\n", a...)
	}
}

// Start builds the scenario's network, starts its services (DNS,
// registry, token and blob hosts), then the control plane in
// cluster.controlPlane's namespace and a containerd and kubelet for every
// node that is not `later`, and returns when all of them are Ready. On
// error everything it started is torn down.
func Start(ctx context.Context, s *scenario.Scenario, o Options) (cl *Cluster, err error) {
	if err := lab.Supported(); err != nil {
		return nil, err
	}
	if s.Cluster == nil {
		return nil, fmt.Errorf("scenario %s has no cluster section", s.Name)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %s: %v", s.Name, err)
	}
	bin, err := ResolveBinDir(o.BinDir)
	if err != nil {
		return nil, err
	}
	if o.Self == "" {
		if o.Self, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	// the registry's image runs on the nodes: its first layer is the pause
	// binary
	base, err := pauseLayer(filepath.Join(bin, "pause"))
	if err != nil {
		return nil, err
	}
	c := &Cluster{scen: s, o: o, bin: bin, nodes: map[string]*clusterNode{}}
	defer func() {
		if err != nil {
			c.Close()
			cl = nil
		}
	}()
	start := time.Now()
	// 1. the lab: network and services
	c.lab, err = lab.Start(ctx, s, lab.StartOptions{Self: o.Self, Keep: o.Keep, Progress: o.Progress,
		ImageBase: base, ImageCmd: []string{"/pause"}})
	if c.lab != nil {
		c.Prefix, c.RunDir, c.Env = c.lab.Session.Prefix, c.lab.Session.RunDir, c.lab.Env
		c.dir = filepath.Join(c.RunDir, "cluster")
	}
	if err != nil {
		return nil, err
	}
	c.logf("network and services up in %s", time.Since(start).Round(time.Millisecond))
	// 2. the control plane, and the forwarder the clients reach it through
	if err = os.MkdirAll(c.dir, 0o755); err != nil {
		return nil, err
	}
	if c.pki, err = newClusterPKI(filepath.Join(c.dir, "pki")); err != nil {
		return nil, err
	}
	c.apiserverIP = s.APIServerAddr(netip.IPv4Unspecified())
	if c.pauseTar, err = writeSandboxImage(filepath.Join(bin, "pause"), filepath.Join(c.dir, "pause.tar")); err != nil {
		return nil, err
	}
	if err = c.startControlPlane(ctx); err != nil {
		return nil, err
	}
	c.logf("control plane ready in %s", time.Since(start).Round(time.Millisecond))
	if err = c.startForwarder(ctx); err != nil {
		return nil, err
	}
	// 3. the first nodes
	var first []string
	for _, h := range s.Cluster.ClusterOrder() {
		if !s.Cluster.Nodes[h].Later {
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
		for _, p := range c.procs {
			p.Release()
		}
		k := &lab.KeptRun{Name: s.Name, Source: s.Source(), NodeNS: c.lab.Network.NS[s.Node.Host], Namespace: c.lab.Network.NS,
			Started: start.UTC(), Kubeconfig: c.Kubeconfig, Nodes: c.NodeNames()}
		if err = c.lab.Keep(k); err != nil {
			return nil, err
		}
		c.kept = k
	}
	return c, nil
}

// startForwarder opens the loopback forwarder into the control plane's
// namespace and writes the admin kubeconfig for it.
func (c *Cluster) startForwarder(ctx context.Context) error {
	ns := c.lab.Network.NS[c.scen.Cluster.ControlPlane]
	target := fmt.Sprintf("%s:%d", c.apiserverIP, apiserverPort)
	addr := ""
	if c.o.Keep {
		ready := filepath.Join(c.dir, "forward.addr")
		p, err := c.startProc("forward", "forward.log",
			c.o.Self, "lab", "forward", "--netns", ns, "--to", target, "--listen", "127.0.0.1:0", "--ready", ready)
		if err != nil {
			return err
		}
		c.procs = append(c.procs, p)
		deadline := time.Now().Add(10 * time.Second)
		for {
			if b, err := os.ReadFile(ready); err == nil && strings.Contains(string(b), "\n") {
				addr = strings.TrimSpace(string(b))
				break
			}
			if !p.Running() || time.Now().After(deadline) {
				return fmt.Errorf("apiserver forwarder did not start: %s", childproc.LastLines(p.Log, 2))
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	} else {
		f, err := lab.Forward(ns, "127.0.0.1:0", target)
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
	t := c.scen
	idx := 0
	for i, h := range t.Cluster.ClusterOrder() {
		if h == host {
			idx = i
		}
	}
	n := &clusterNode{host: host, name: t.NodeName(host), ip: t.NodeIP(host), podCIDR: t.Cluster.NodePodCIDR(idx),
		dir: c.NodeDir(host), cgroup: "/" + lab.CgroupParent + "/" + c.Prefix + host}
	if n.ip.Is6() {
		// an IPv6-only node: its Pods are IPv6 too, so the node has no
		// IPv4 address anywhere (cni0 included)
		n.podCIDR = t.Cluster.NodePodCIDR6(idx)
	}
	if err := lab.MakeNodeCgroup(c.Prefix + host); err != nil {
		return err
	}
	if err := c.writeNodeFiles(n); err != nil {
		return fmt.Errorf("node %s: %v", host, err)
	}
	if err := c.routeServices(ctx, n); err != nil {
		return err
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
	p, err := c.startProc("node "+host, host+"-start.log",
		"nsenter", "--net="+lab.NetnsPath(c.lab.Network.NS[host]), "--",
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
// Ready and its kube-proxy has written the Services' rules, and fails
// early if its kubelet or kube-proxy exits.
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
						return c.waitProxy(ctx, n, deadline)
					}
					last = cond.Reason + ": " + cond.Message
				}
			}
		}
		if !n.proc.Running() {
			return fmt.Errorf("node %s: kubelet exited: %s | %s", host, childproc.LastLines(n.proc.Log, 3),
				childproc.LastLines(filepath.Join(c.RunDir, "logs", host+"-kubelet.log"), 3))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s (%s) not Ready after %s: %s; kubelet log: %s", host, n.name, timeout, units.OneLine(last),
				childproc.LastLines(filepath.Join(c.RunDir, "logs", host+"-kubelet.log"), 3))
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
	if c.scen.Cluster.Nodes[host] == nil {
		return ""
	}
	return c.scen.NodeName(host)
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
func (c *Cluster) NodeDir(host string) string { return filepath.Join(c.RunDir, "nodes", host) }

// Namespace is the network namespace of a host.
func (c *Cluster) Namespace(host string) string { return c.lab.Network.NS[host] }

// Scenario is the scenario the cluster runs.
func (c *Cluster) Scenario() *scenario.Scenario { return c.scen }

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
	return lab.Command(ctx, "nsenter", append([]string{"--target", pid, "--net", "--mount", "--uts", "--"}, argv...)...), nil
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
	syscall.Kill(n.proc.Pid(), syscall.SIGKILL)
	select {
	case <-n.proc.Done():
	case <-time.After(5 * time.Second):
		return fmt.Errorf("node %s: the kubelet did not exit after SIGKILL", host)
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
	if n.proc.Running() {
		return fmt.Errorf("node %s: the kubelet is running", host)
	}
	b, err := os.ReadFile(filepath.Join(n.dir, "containerd.pid"))
	if err != nil {
		return err
	}
	p, err := c.startProc("kubelet "+host, host+"-start.log",
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

// AddNode starts a node that the scenario marks `later` (the scale-up:
// created after the others, so its creationTimestamp is the newest) and
// waits until it is Ready. Images given to ImportImage are imported first.
func (c *Cluster) AddNode(ctx context.Context, host string) error {
	spec := c.scen.Cluster.Nodes[host]
	if spec == nil {
		return fmt.Errorf("add node: %q is not a node host of scenario %s", host, c.scen.Name)
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
func (c *Cluster) Route(ctx context.Context, host, action string, r scenario.Route) error {
	return c.lab.Network.Route(ctx, host, action, r)
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
		out, err := lab.Command(ictx, "ctr", "-a", n.sock(), "-n", "k8s.io", "images", "import", "--snapshotter", "overlayfs", abs).CombinedOutput()
		cancel()
		if err != nil {
			hint := ""
			if strings.Contains(string(out), "filtered out") {
				hint = " (ctr keeps only images for this machine's platform: set os and architecture in the image's config)"
			}
			return fmt.Errorf("import %s into node %s: %v: %s%s", filepath.Base(abs), h, err, units.OneLine(string(out)), hint)
		}
	}
	return nil
}

// Logs is where the run's logs are: etcd.log, kube-apiserver.log, HOST-kubelet.log,
// HOST-containerd.log, ...
func (c *Cluster) Logs() string { return filepath.Join(c.RunDir, "logs") }

// Close stops every process, deletes every namespace, mount and cgroup of
// the run and its folder. With Keep it does nothing: `lab down` does it.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		if c.kept != nil {
			return // kept by lab up
		}
		if c.fwd != nil {
			c.fwd.Close()
		}
		c.mu.Lock()
		procs := append([]*childproc.Proc(nil), c.procs...)
		c.mu.Unlock()
		// nodes first (kubelets, containerd), then the control plane
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].Kill(5 * time.Second)
		}
		if c.lab != nil {
			c.closeErr = c.lab.Close()
		}
	})
	return c.closeErr
}

// SaveLogs copies the run's logs to ROOT/pullpath-lab-NAME-PREFIX (ROOT
// default os.TempDir()) before a teardown removes them, and returns where.
func (c *Cluster) SaveLogs(root string) string { return c.lab.SaveLogs(root) }
