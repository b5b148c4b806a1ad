package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/cluster"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/testenv/kwait"
)

var scenarioFilter = flag.String("scenarios", "", "comma-separated built-in cluster scenarios TestClusterScenarios runs (default all)")

// clusterScenarios are the built-in scenarios with a cluster section (those
// of -scenarios when given).
func clusterScenarios(t *testing.T) []*scenario.Scenario {
	t.Helper()
	var names []string
	if *scenarioFilter != "" {
		names = strings.Split(*scenarioFilter, ",")
	}
	topos, err := scenario.LoadAll(names)
	if err != nil {
		t.Fatal(err)
	}
	var out []*scenario.Scenario
	for _, tp := range topos {
		if tp.Cluster != nil {
			out = append(out, tp)
		}
	}
	if len(names) > 0 && len(out) != len(names) {
		t.Fatalf("-scenarios %s: %d of them have a cluster section", *scenarioFilter, len(out))
	}
	if len(names) == 0 && len(out) < 4 {
		t.Fatalf("%d built-in cluster scenarios, want at least 4", len(out))
	}
	return out
}

// requireCluster skips (or with CI=true fails) when namespaces cannot be
// made or the cluster's binaries are missing, saying how to build them.
func requireCluster(t *testing.T) {
	t.Helper()
	testenv.RequireNetns(t, "nft")
	if _, err := cluster.ResolveBinDir(""); err != nil {
		testenv.Unavailable(t, err.Error())
	}
}

// machineSysctls reads the six machine-wide sysctls a kubelet would write,
// and the root namespace's interfaces, routes and rules (a CNI plugin or a
// kubelet must add none).
func machineSysctls(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, argv := range [][]string{{"ip", "-o", "link", "show"}, {"ip", "route", "show", "table", "all"}, {"ip", "rule", "show"}} {
		b, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil {
			t.Fatalf("%v: %v", argv, err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if f := strings.Fields(l); argv[1] == "-o" && len(f) > 1 {
				l = f[1] // the interface name: counters and flags may change
			}
			out = append(out, argv[1]+" "+l)
		}
	}
	for _, f := range []string{"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes"} {
		b, err := os.ReadFile("/proc/sys/" + f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f+"="+strings.TrimSpace(string(b)))
	}
	// what kube-proxy could write: conntrack's machine-wide limit and hash
	// size, its per-namespace timeouts (the root namespace's must not
	// move), route_localnet (the iptables proxier's), and forwarding
	for _, f := range []string{"/proc/sys/net/netfilter/nf_conntrack_max", "/sys/module/nf_conntrack/parameters/hashsize",
		"/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established", "/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_close_wait",
		"/proc/sys/net/netfilter/nf_conntrack_tcp_be_liberal", "/proc/sys/net/ipv4/conf/all/route_localnet", "/proc/sys/net/ipv4/ip_forward",
		"/proc/sys/net/bridge/bridge-nf-call-iptables"} {
		b, err := os.ReadFile(f)
		v := strings.TrimSpace(string(b))
		if err != nil {
			v = "unreadable" // not on this kernel: still must not appear
		}
		out = append(out, f+"="+v)
	}
	return out
}

// TestClusterScenarios is `pullpath lab test` over the cluster scenarios:
// real kubelets pull through the scenario's network, and the replicas that
// fail and what explain says must match each cluster.expect; nothing may be
// left and the machine's sysctls must not change.
func TestClusterScenarios(t *testing.T) {
	requireCluster(t)
	t.Parallel() // the cluster tests overlap: about 1 GB each, CPU mostly idle once Ready
	topos := clusterScenarios(t)
	before, sysBefore := labtest.MachineState(t), machineSysctls(t)
	// Ten scenarios, two at a time: about 25 s each alone, 54 s beside
	// others; the package took 305 s in a warm CI (load ~4).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rep := lab.Test(ctx, topos, 2, lab.Options{KeepLogs: true, Cluster: cluster.Run}, nil)
	for _, r := range rep.Runs {
		t.Run(r.Scenario, func(t *testing.T) {
			t.Logf("%s %.1fs (logs %s)", r.Result, r.Timings.TotalMS/1000, r.LogDir)
			var check *report.LabCheck
			for i := range r.Checks {
				if r.Checks[i].Name == "cluster" {
					check = &r.Checks[i]
				}
			}
			if check == nil {
				t.Fatalf("lab run %s has no cluster check (%s)", r.Scenario, r.Error)
			}
			t.Logf("cluster: %s", check.Detail)
			if r.Result != report.LabPass {
				t.Errorf("lab run %s = %s (%s), want pass: %v", r.Scenario, r.Result, r.Error, r.Mismatches)
			}
			if p := labtest.RunPrefix(r); p != "" {
				labtest.CheckClean(t, "lab run "+r.Scenario, p, before)
			}
		})
	}
	if diff := slices.Compare(sysBefore, machineSysctls(t)); diff != 0 {
		t.Errorf("machine sysctls changed: before %v, after %v", sysBefore, machineSysctls(t))
	}
}

// TestClusterAPI drives the Go API the sweep, monitor, identity and
// diagnose tests use: labels and providerIDs as EKS sets them, the node's
// own namespaces, a masked sysctl, cordon, an imported image, the
// scale-up, a stopped kubelet, a changed route, and a teardown that leaves
// nothing.
func TestClusterAPI(t *testing.T) {
	requireCluster(t)
	t.Parallel() // the cluster tests overlap: about 1 GB each, CPU mostly idle once Ready
	topo, err := scenario.LoadBuiltin("scale-up-new-subnet")
	if err != nil {
		t.Fatal(err)
	}
	before, sysBefore := labtest.MachineState(t), machineSysctls(t)
	ctx := t.Context()
	c, err := cluster.Start(ctx, topo, cluster.Options{
		KubeletArgs: []string{"--v=2"},
		NodeSetup: func(host, dir string) error {
			return os.WriteFile(filepath.Join(dir, "var-lib", "lab-setup"), []byte(host+"\n"), 0o644)
		},
	})
	if err != nil {
		t.Fatalf("StartCluster: %v", err)
	}
	closed := false
	defer func() {
		if !closed {
			c.SaveLogs("")
			c.Close()
		}
	}()
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list nodes through the kubeconfig's forwarder: %v", err)
	}
	if want := []string{"ip-10-0-1-10.ap-northeast-2.compute.internal", "ip-10-0-2-10.ap-northeast-2.compute.internal"}; !slices.Equal(c.NodeNames(), want) {
		t.Errorf("NodeNames() = %v, want %v", c.NodeNames(), want)
	}
	if len(nodes.Items) != 2 {
		t.Fatalf("%d nodes, want 2 (node-c joins later)", len(nodes.Items))
	}
	for _, n := range nodes.Items {
		if n.Labels["eks.amazonaws.com/nodegroup"] != "ng-general" || n.Labels["pullpath.io/subnet"] == "" || n.Labels["topology.kubernetes.io/zone"] == "" {
			t.Errorf("node %s labels %v, want nodegroup, zone and subnet labels", n.Name, n.Labels)
		}
		if !regexp.MustCompile(`^aws:///ap-northeast-2[ab]/i-0[0-9a-f]{15}$`).MatchString(n.Spec.ProviderID) {
			t.Errorf("node %s providerID %q, want aws:///ZONE/i-0...", n.Name, n.Spec.ProviderID)
		}
	}

	// the node's own UTS and mount namespaces, and its masked sysctl
	out := execOut(t, c, "node-a", "sh", "-c", "hostname; cat /proc/sys/vm/overcommit_memory; cat /etc/resolv.conf")
	if !strings.HasPrefix(out, "ip-10-0-1-10.ap-northeast-2.compute.internal\n1\n") || !strings.Contains(out, "nameserver 10.0.0.2") {
		t.Errorf("in node-a: hostname, overcommit_memory, resolv.conf = %q", out)
	}

	// NodeSetup's file is the node's /var/lib/lab-setup; KubeletArgs reach the kubelet
	if out := execOut(t, c, "node-b", "cat", "/var/lib/lab-setup"); out != "node-b\n" {
		t.Errorf("node-b /var/lib/lab-setup = %q, want NodeSetup's", out)
	}
	if !kubeletHasArg(c.NodeDir("node-a"), "--v=2") {
		t.Errorf("node-a's kubelet runs without KubeletArgs' --v=2")
	}

	// kubeconfig from the root namespace: a file kubectl-like clients read
	if b, err := os.ReadFile(c.Kubeconfig); err != nil || !bytes.Contains(b, []byte("server: https://127.0.0.1:")) {
		t.Errorf("Kubeconfig %s: %v %q, want a loopback server", c.Kubeconfig, err, b)
	}

	// an image tarball imported into every node (and later nodes)
	img, err := random.Image(1024, 1)
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	tarPath := filepath.Join(t.TempDir(), "extra.tar")
	if err := tarball.WriteToFile(tarPath, name.MustParseReference("lab.example/extra:v1"), img); err != nil {
		t.Fatal(err)
	}
	if err := c.ImportImage(ctx, tarPath); err != nil {
		t.Fatalf("ImportImage: %v", err)
	}

	// the scale-up: node-c joins, newest; the imported image is on it
	if err := c.AddNode(ctx, "node-c"); err != nil {
		t.Fatalf("AddNode(node-c): %v", err)
	}
	if got := c.Hosts(); !slices.Equal(got, []string{"node-a", "node-b", "node-c"}) {
		t.Errorf("Hosts() = %v after AddNode", got)
	}
	for _, h := range c.Hosts() {
		if out := execOut(t, c, h, "ctr", "-a", filepath.Join(c.RunDir, "nodes", h, "containerd", "containerd.sock"), "-n", "k8s.io", "images", "ls", "-q"); !strings.Contains(out, "lab.example/extra:v1") || !strings.Contains(out, cluster.SandboxImage) {
			t.Errorf("images on %s = %q, want lab.example/extra:v1 and %s", h, out, cluster.SandboxImage)
		}
	}
	if err := c.AddNode(ctx, "node-c"); err == nil {
		t.Errorf("AddNode(node-c) twice = nil error, want one")
	}

	// cordon
	if err := c.Cordon(ctx, "node-b"); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Client.CoreV1().Nodes().Get(ctx, c.NodeName("node-b"), metav1.GetOptions{}); err != nil || !n.Spec.Unschedulable {
		t.Errorf("node-b after Cordon: %v unschedulable=%v", err, n != nil && n.Spec.Unschedulable)
	}

	// a route change (the repair or the break), seen from inside the node
	if err := c.Route(ctx, "node-c", "add", scenario.Route{To: "10.9.0.0/16", Via: "10.0.3.1"}); err != nil {
		t.Fatal(err)
	}
	if out := execOut(t, c, "node-c", "ip", "route"); !strings.Contains(out, "10.9.0.0/16 via 10.0.3.1") {
		t.Errorf("node-c routes after Route(add) = %q", out)
	}

	// Service networking: from inside a node's network namespace (as a
	// hostNetwork Pod), the kubernetes Service's ClusterIP answers as the
	// apiserver, through the node's kube-proxy (nftables, in the node's
	// namespace only: the machine's tables are checked by labtest.CheckClean)
	svc := rest.CopyConfig(c.Config)
	svc.Host = "https://" + net.JoinHostPort(topo.Cluster.APIServiceIP().String(), "443")
	svc.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return lab.DialInNamespace(ctx, c.Namespace("node-a"), network, addr)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(svc)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := dc.ServerVersion(); err != nil || v.GitVersion != "v1.37.2" {
		t.Errorf("apiserver version through %s from node-a = %v, %v; want v1.37.2", svc.Host, v, err)
	}
	if out := execOut(t, c, "node-a", "nft", "list", "table", "ip", "kube-proxy"); !strings.Contains(out, topo.Cluster.APIServiceIP().String()) {
		t.Errorf("node-a's kube-proxy table does not name %s:\n%s", topo.Cluster.APIServiceIP(), out)
	}

	// a stopped kubelet: NotReady, then Ready again
	if err := c.StopKubelet(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	waitNodeReady(t, c, "node-a", corev1.ConditionUnknown, 60*time.Second)
	if err := c.StartKubelet(ctx, "node-a"); err != nil {
		t.Fatalf("StartKubelet: %v", err)
	}

	prefix := c.Prefix
	if len(lab.Leftovers(prefix)) == 0 {
		t.Fatal("Leftovers of a running cluster = none: the teardown check would prove nothing")
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	closed = true
	labtest.CheckClean(t, "Close", prefix, before)
	if diff := slices.Compare(sysBefore, machineSysctls(t)); diff != 0 {
		t.Errorf("machine sysctls changed: before %v, after %v", sysBefore, machineSysctls(t))
	}
}

func execOut(t *testing.T, c *cluster.Cluster, host string, argv ...string) string {
	t.Helper()
	cmd, err := c.Exec(t.Context(), host, argv...)
	if err != nil {
		t.Fatalf("Exec(%s): %v", host, err)
	}
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("in %s, %v: %v: %s", host, argv, err, b)
	}
	return string(b)
}

// waitNodeReady waits (watching the Node, bounded by d) until the node's
// Ready condition is want.
func waitNodeReady(t *testing.T, c *cluster.Cluster, host string, want corev1.ConditionStatus, d time.Duration) {
	t.Helper()
	kwait.One(t.Context(), t, d, "node "+host+" Ready="+string(want), kwait.Node(c.Client, c.NodeName(host)),
		func(n *corev1.Node) bool { return kwait.NodeReady(n) == want })
}

// prefixWriter catches the run prefix from StartCluster's first progress
// line.
type prefixWriter struct {
	mu     sync.Mutex
	prefix string
	lines  []string
}

var prefixLineRE = regexp.MustCompile(`prefix (ppl[0-9a-f]{6}-)`)

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, string(p))
	if m := prefixLineRE.FindStringSubmatch(string(p)); m != nil && w.prefix == "" {
		w.prefix = m[1]
	}
	return len(p), nil
}

func (w *prefixWriter) saw(s string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// TestClusterTeardown checks that a cluster leaves nothing (processes,
// namespaces, mounts, cgroups in every hierarchy) after a failure once the
// namespaces exist, after Ctrl-C while nodes start, and after the CLI is
// killed with SIGKILL mid-run (then the next sweep cleans up). Success is
// checked by TestClusterAPI and TestClusterScenarios.
func TestClusterTeardown(t *testing.T) {
	requireCluster(t)
	t.Parallel() // the cluster tests overlap: about 1 GB each, CPU mostly idle once Ready
	topo, err := scenario.LoadBuiltin("cluster-healthy")
	if err != nil {
		t.Fatal(err)
	}
	before := labtest.MachineState(t)

	t.Run("failure", func(t *testing.T) {
		w := &prefixWriter{}
		_, err := cluster.Start(context.Background(), topo, cluster.Options{Self: "/nonexistent/pullpath", Progress: w})
		if err == nil || w.prefix == "" {
			t.Fatalf("StartCluster with a missing binary = %v (prefix %q), want an error after the namespaces exist", err, w.prefix)
		}
		labtest.CheckClean(t, "a failed start", w.prefix, before)
	})

	t.Run("failure-after-a-node-runs", func(t *testing.T) {
		w := &prefixWriter{}
		_, err := cluster.Start(context.Background(), topo, cluster.Options{Progress: w,
			NodeSetup: func(host, dir string) error {
				if host == "node-b" {
					return errors.New("a setup that fails")
				}
				return nil
			}})
		if err == nil || !strings.Contains(err.Error(), "a setup that fails") || !w.saw("node ip-10-0-1-10") {
			t.Fatalf("StartCluster = %v, want node-b's setup error after node-a started", err)
		}
		labtest.CheckClean(t, "a start that failed with a node running", w.prefix, before)
	})

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := &prefixWriter{}
		done := make(chan error, 1)
		go func() {
			c, err := cluster.Start(ctx, topo, cluster.Options{Progress: w})
			if c != nil {
				c.Close()
			}
			done <- err
		}()
		// the control plane starts first: over a minute on a loaded
		// two-core machine
		deadline := time.Now().Add(3 * time.Minute)
		for !w.saw("starting") {
			if time.Now().After(deadline) {
				t.Fatal("no node started within 3m")
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		err := <-done
		if err == nil || !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "cancel") {
			t.Errorf("cancelled StartCluster = %v, want a cancellation error", err)
		}
		labtest.CheckClean(t, "a cancelled start", w.prefix, before)
	})

	t.Run("ctrl-c", func(t *testing.T) {
		cmd := exec.Command(os.Args[0], "lab", "run", "cluster-healthy")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		prefix := waitContainerOf(t, cmd.Process.Pid)
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("lab run did not exit within 60s of SIGINT")
		}
		labtest.CheckClean(t, "Ctrl-C of lab run (no sweep)", prefix, before)
	})

	t.Run("killed", func(t *testing.T) {
		cmd := exec.Command(os.Args[0], "lab", "run", "cluster-healthy")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		prefix := waitContainerOf(t, cmd.Process.Pid)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if left := lab.Leftovers(prefix); !slices.ContainsFunc(left, func(s string) bool { return strings.HasPrefix(s, "cgroup ") }) {
			t.Fatalf("Leftovers after SIGKILL = %v, want the killed run's cgroups (the test proves nothing)", left)
		}
		swept, err := lab.Sweep(context.Background())
		if err != nil {
			t.Fatalf("Sweep: %v", err)
		}
		if !slices.Contains(swept, prefix) {
			t.Errorf("Sweep() = %v, want the killed run's prefix %s", swept, prefix)
		}
		labtest.CheckClean(t, "a sweep of a killed cluster run", prefix, before)
	})
}

// hasContainer reports whether a pod's container runs in a cgroup of the
// prefix (the kubelet put it under its node's kubepods).
func hasContainer(prefix string) bool {
	m, _ := filepath.Glob("/sys/fs/cgroup/memory/pullpath-lab/" + prefix + "*/kubepods/*/pod*/*/cgroup.procs")
	for _, f := range m {
		if b, err := os.ReadFile(f); err == nil && len(bytes.TrimSpace(b)) > 0 {
			return true
		}
	}
	return false
}

// TestClusterUpDown runs `pullpath lab up` on a cluster scenario as its own
// process (which exits), uses the kubeconfig it prints from this process
// (through the forwarder it left running), then `pullpath lab down`, and
// checks that nothing is left.
func TestClusterUpDown(t *testing.T) {
	requireCluster(t)
	t.Parallel() // the cluster tests overlap: about 1 GB each, CPU mostly idle once Ready
	before := labtest.MachineState(t)
	up := exec.Command(os.Args[0], "lab", "up", "cluster-healthy")
	out, err := up.CombinedOutput()
	if err != nil {
		t.Fatalf("lab up cluster-healthy: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`export KUBECONFIG=(\S+)`).FindSubmatch(out)
	pm := regexp.MustCompile(`prefix (ppl[0-9a-f]{6}-)`).FindSubmatch(out)
	if m == nil || pm == nil {
		t.Fatalf("lab up printed no kubeconfig or prefix:\n%s", out)
	}
	prefix := string(pm[1])
	defer exec.Command(os.Args[0], "lab", "down", prefix).Run()
	cfg, err := clientcmd.BuildConfigFromFlags("", string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list nodes with lab up's kubeconfig after lab up exited: %v", err)
	}
	ready := 0
	for _, n := range nodes.Items {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	if ready != 2 {
		t.Errorf("%d Ready nodes through lab up's kubeconfig, want 2", ready)
	}
	down, err := exec.Command(os.Args[0], "lab", "down", prefix).CombinedOutput()
	if err != nil || !strings.Contains(string(down), "is down") {
		t.Errorf("lab down %s: %v\n%s", prefix, err, down)
	}
	labtest.CheckClean(t, "lab down", prefix, before)
}

// kubeletHasArg reports whether the kubelet of the node whose folder is dir
// runs with arg (other clusters of parallel tests have nodes of the same
// names).
func kubeletHasArg(dir, arg string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 0 && strings.HasSuffix(args[0], "/kubelet") && slices.Contains(args, "--config="+filepath.Join(dir, "kubelet.yaml")) {
			return slices.Contains(args, arg)
		}
	}
	return false
}

// waitContainerOf waits (3m: a whole cluster start, slow on a loaded
// machine) until the lab run of process pid runs a
// container on a node, and returns its prefix.
func waitContainerOf(t *testing.T, pid int) string {
	t.Helper()
	var prefix string
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if prefix == "" {
			prefix = labtest.KilledPrefix(pid)
		}
		if prefix != "" && hasContainer(prefix) {
			return prefix
		}
		if time.Now().After(deadline) {
			t.Fatalf("lab run: no running container within 3m (prefix %q)", prefix)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
