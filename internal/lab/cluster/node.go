package cluster

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pullpath/pullpath/internal/childproc"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/scenario"
)

// The six machine-wide sysctls the kubelet writes at start. Each node's
// mount namespace gets a file holding the value bind-mounted over the
// /proc/sys file, and protectKernelDefaults makes any other value fatal:
// the kubelet never changes the shared machine.
var kubeletSysctls = [][2]string{
	{"vm/overcommit_memory", "1"},
	{"vm/panic_on_oom", "0"},
	{"kernel/panic", "10"},
	{"kernel/panic_on_oops", "1"},
	{"kernel/keys/root_maxkeys", "1000000"},
	{"kernel/keys/root_maxbytes", "25000000"},
}

// SandboxImage is the tag containerd's sandbox_image names; the lab imports
// an image of that name (internal/lab/pause) into every node, so it is
// never pulled.
const SandboxImage = "registry.k8s.io/pause:3.10"

// clusterNode is one kubelet node of a running cluster.
type clusterNode struct {
	host    string
	name    string
	ip      netip.Addr
	podCIDR netip.Prefix
	dir     string          // RUN/nodes/HOST
	cgroup  string          // cgroup path of the node (its kubelet's cgroupRoot)
	proc    *childproc.Proc // the start script, then the kubelet it execs
}

func (n *clusterNode) sock() string { return filepath.Join(n.dir, "containerd", "containerd.sock") }

// writeNodeFiles writes everything a node reads: containerd's config, the
// CNI config, the kubelet's config, kubeconfig and credentials, the
// resolver, hosts file and certs.d of the scenario, the sysctl masks and
// the start script.
func (c *Cluster) writeNodeFiles(n *clusterNode) error {
	t := c.scen
	spec := t.Cluster.Nodes[n.host]
	for _, d := range []string{"containerd/root", "containerd/state", "containerd/opt", "cni/net.d", "cni/data", "var-lib/kubelet", "var-lib/.stage", "var-log", "sysctl", "certs.d"} {
		if err := os.MkdirAll(filepath.Join(n.dir, d), 0o755); err != nil {
			return err
		}
	}
	w := func(name, content string, mode os.FileMode) error {
		return os.WriteFile(filepath.Join(n.dir, name), []byte(content), mode)
	}
	if err := c.writeResolver(n, spec); err != nil {
		return err
	}
	for _, s := range kubeletSysctls {
		if err := w("sysctl/"+strings.ReplaceAll(s[0], "/", "."), s[1]+"\n", 0o644); err != nil {
			return err
		}
	}
	if err := c.writeRuntimeFiles(n, spec); err != nil {
		return err
	}
	if err := w("cni/net.d/10-lab.conflist", c.cniConfig(n), 0o644); err != nil {
		return err
	}
	// the kubelet's identity: system:node:NAME in system:nodes
	if err := c.pki.kubeconfig(filepath.Join(n.dir, "kubelet.kubeconfig"), c.internalServer(n), "node-"+n.host,
		"system:node:"+n.name, []string{"system:nodes"}); err != nil {
		return err
	}
	if err := w("kubelet.yaml", c.kubeletConfig(n), 0o644); err != nil {
		return err
	}
	// the kubelet's credential provider plugin (node.credentialProvider)
	if _, err := c.Env.CredentialProviderFiles(); err != nil {
		return err
	}
	if err := w("kubelet.sh", c.kubeletScript(n), 0o755); err != nil {
		return err
	}
	if err := c.writeProxyFiles(n); err != nil {
		return err
	}
	// the node's containerd proxy settings in its own files (its
	// systemd folder with the drop-in, /etc/environment), where a sweep
	// Pod's read-only /etc mount reads them
	if np := c.nodeProxy(n); np != nil {
		if err := lab.WriteNodeProxyFiles(filepath.Join(n.dir, "etc"), t.Name, np); err != nil {
			return err
		}
	}
	return w("start.sh", c.startScript(n), 0o755)
}

// writeResolver writes the node's resolv.conf and hosts: the scenario's,
// per node where it says so.
func (c *Cluster) writeResolver(n *clusterNode, spec *scenario.ClusterNode) error {
	t := c.scen
	ns := t.Node.Nameservers
	if len(spec.Nameservers) > 0 {
		ns = spec.Nameservers
	}
	var rc strings.Builder
	rc.WriteString("# written by pullpath lab for node " + n.name + "\n")
	if len(t.Node.Search) > 0 {
		rc.WriteString("search " + strings.Join(t.Node.Search, " ") + "\n")
	}
	for _, s := range ns {
		rc.WriteString("nameserver " + s + "\n")
	}
	rc.WriteString("options timeout:1 attempts:1\n")
	hosts := "127.0.0.1 localhost\n" + n.ip.String() + " " + n.name + "\n"
	for _, l := range append(append([]string{}, t.Node.HostsEntries...), spec.HostsEntries...) {
		hosts += strings.Join(strings.Fields(l), " ") + "\n"
	}
	if err := os.WriteFile(filepath.Join(n.dir, "resolv.conf"), []byte(rc.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(n.dir, "hosts"), []byte(hosts), 0o644)
}

// writeRuntimeFiles writes what the node's containerd reads, where its
// layout keeps it: certs.d with the lab CA (and the node's mirrors) for
// the registry host, as the runtime hook does; the kubelet's docker
// config; containerd's config.toml.
func (c *Cluster) writeRuntimeFiles(n *clusterNode, spec *scenario.ClusterNode) error {
	t := c.scen
	lp := layoutPaths(n, spec)
	if c.Env.CAFile != "" && t.Registry != nil {
		host := t.RegistryKey()
		b, err := os.ReadFile(c.Env.CAFile)
		if err != nil {
			return err
		}
		hd := filepath.Join(lp.certsReal, host)
		if err := os.MkdirAll(hd, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(hd, "ca.crt"), b, 0o644); err != nil {
			return err
		}
		// the mirrors of its hosts.toml (cluster.nodes.HOST.mirrors), the
		// CA named relative to the file, so that a sweep Pod mounting
		// the node's /etc and /var/lib reads it too
		if ms := t.NodeMirrors(n.host); len(ms) > 0 {
			if err := os.WriteFile(filepath.Join(hd, "hosts.toml"), []byte(lab.MirrorsHostsToml(t, ms, "ca.crt")), 0o644); err != nil {
				return err
			}
		}
	}
	// the kubelet's docker config: /var/lib/kubelet/config.json
	if t.Node.Credentials != nil && (t.Cluster.Workload == nil || !t.Cluster.Workload.PullSecret) {
		if err := os.WriteFile(filepath.Join(n.dir, "var-lib/kubelet/config.json"), lab.DockerConfig(t), 0o600); err != nil {
			return err
		}
	}
	// world-readable, as distributions write it: the sweep's probe Pod
	// (uid 65532) reads it to find the node's config_path
	if err := os.MkdirAll(filepath.Dir(lp.configReal), 0o755); err != nil {
		return err
	}
	return os.WriteFile(lp.configReal, []byte(c.containerdConfig(n, lp.certsNode)), 0o644)
}

// cniConfig is the node's bridge network: its Pod range, and a route for
// the Service range only.
func (c *Cluster) cniConfig(n *clusterNode) string {
	t := c.scen
	cni := map[string]any{
		"cniVersion": "0.4.0", "name": "lab",
		"plugins": []any{map[string]any{
			"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
			// a route for the Service range only (through cni0, where
			// kube-proxy's DNAT sends it on): pods reach ClusterIPs, and
			// nothing else beyond their node, as before
			"ipam": map[string]any{"type": "host-local", "ranges": [][]map[string]string{{{"subnet": n.podCIDR.String()}}},
				"routes":  []map[string]string{{"dst": t.Cluster.ServiceRange().Masked().String()}},
				"dataDir": filepath.Join(n.dir, "cni", "data")},
		}},
	}
	if n.podCIDR.Addr().Is6() {
		// an IPv6-only node's Pods: no route to the IPv4 Service range
		// (an IPv6 cluster's Services are IPv6; the lab's are IPv4)
		delete(cni["plugins"].([]any)[0].(map[string]any)["ipam"].(map[string]any), "routes")
	}
	b, _ := json.MarshalIndent(cni, "", "  ")
	return string(b)
}

// internalServer is the apiserver's URL for node n: the control plane's
// address in the node address's family (an IPv6-only node's kubelet and
// kube-proxy reach it over IPv6).
func (c *Cluster) internalServer(n *clusterNode) string {
	return "https://" + netip.AddrPortFrom(c.scen.APIServerAddr(n.ip), apiserverPort).String()
}

func (c *Cluster) containerdConfig(n *clusterNode, certsNode string) string {
	d := filepath.Join(n.dir, "containerd")
	q := func(s string) string { return `"` + s + `"` }
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	p("# written by pullpath lab for node %s", n.name)
	p("version = 2")
	p("root = %s", q(filepath.Join(d, "root")))
	p("state = %s", q(filepath.Join(d, "state")))
	p(`disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]`)
	p("[grpc]\n  address = %s", q(filepath.Join(d, "containerd.sock")))
	p("[ttrpc]\n  address = %s", q(filepath.Join(d, "containerd.sock.ttrpc")))
	p("[debug]\n  address = %s\n  level = \"info\"", q(filepath.Join(d, "debug.sock")))
	p("[metrics]\n  address = \"\"")
	p("[plugins]")
	p("  [plugins.\"io.containerd.internal.v1.opt\"]\n    path = %s", q(filepath.Join(d, "opt")))
	p("  [plugins.\"io.containerd.grpc.v1.cri\"]")
	p("    sandbox_image = %s", q(SandboxImage))
	p("    disable_tcp_service = true")
	p("    stream_server_address = \"127.0.0.1\"")
	p("    stream_server_port = \"0\"")
	p("    netns_mounts_under_state_dir = true")
	p("    restrict_oom_score_adj = true")
	p("    [plugins.\"io.containerd.grpc.v1.cri\".containerd]")
	p("      snapshotter = \"overlayfs\"")
	p("      default_runtime_name = \"runc\"")
	p("      [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]")
	p("        runtime_type = \"io.containerd.runc.v2\"")
	p("        [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]")
	p("          SystemdCgroup = false")
	p("    [plugins.\"io.containerd.grpc.v1.cri\".cni]")
	p("      bin_dir = \"/usr/lib/cni\"")
	p("      conf_dir = %s", q(filepath.Join(n.dir, "cni", "net.d")))
	p("    [plugins.\"io.containerd.grpc.v1.cri\".registry]")
	p("      config_path = %s", q(certsNode))
	return b.String()
}

// nodeLayout is where a node keeps containerd's config and certs.d: the
// node paths (what containerd and a sweep Pod read, in the node's mount
// namespace) and where they really are in the run folder.
type nodeLayout struct {
	configNode, configReal string
	certsNode, certsReal   string
}

// k3sContainerd is where k3s renders containerd's config and certs.d.
const k3sContainerd = "/var/lib/rancher/k3s/agent/etc/containerd"

// layoutPaths is the node's layout (cluster.nodes.HOST.layout): by
// default /etc/containerd/config.toml and /etc/containerd/certs.d (bound
// into the node's /etc/containerd tmpfs by the start script); k3s's under
// the node's own /var/lib.
func layoutPaths(n *clusterNode, spec *scenario.ClusterNode) nodeLayout {
	if spec != nil && spec.Layout == scenario.LayoutK3s {
		real := filepath.Join(n.dir, "var-lib", strings.TrimPrefix(k3sContainerd, "/var/lib/"))
		return nodeLayout{configNode: k3sContainerd + "/config.toml", configReal: filepath.Join(real, "config.toml"),
			certsNode: k3sContainerd + "/certs.d", certsReal: filepath.Join(real, "certs.d")}
	}
	return nodeLayout{configNode: "/etc/containerd/config.toml", configReal: filepath.Join(n.dir, "containerd", "config.toml"),
		certsNode: "/etc/containerd/certs.d", certsReal: filepath.Join(n.dir, "certs.d")}
}

func (c *Cluster) kubeletConfig(n *clusterNode) string {
	t := c.scen
	dns := t.Cluster.DNSServiceIP()
	return fmt.Sprintf(`# written by pullpath lab for node %s
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %s
containerRuntimeEndpoint: unix://%s
providerID: %q
address: %q
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: %s}
authorization: {mode: AlwaysAllow}
failSwapOn: false
protectKernelDefaults: true
makeIPTablesUtilChains: false
resolvConf: %s
clusterDNS: [%s]
clusterDomain: cluster.local
registerNode: true
serializeImagePulls: false
nodeStatusUpdateFrequency: 4s
nodeStatusReportFrequency: 10s
nodeLeaseDurationSeconds: 8
# the nodes share the machine's disk: an absolute floor, not 1%% of it
# (2.5 GB of a 252 GB disk put every node under DiskPressure)
evictionHard: {memory.available: 100Mi, nodefs.available: 200Mi, imagefs.available: 200Mi, nodefs.inodesFree: 1%%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`, n.name, n.cgroup, n.sock(), t.ProviderID(n.host), n.ip.String(), c.pki.CAFile, filepath.Join(n.dir, "resolv.conf"), dns)
}

func (c *Cluster) kubeletArgs(n *clusterNode) []string {
	labels := c.scen.NodeLabels(n.host)
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var kv []string
	for _, k := range keys {
		kv = append(kv, k+"="+labels[k])
	}
	args := []string{filepath.Join(c.bin, "kubelet"),
		"--config=" + filepath.Join(n.dir, "kubelet.yaml"),
		"--kubeconfig=" + filepath.Join(n.dir, "kubelet.kubeconfig"),
		"--root-dir=/var/lib/kubelet",
		"--hostname-override=" + n.name,
		"--node-ip=" + n.ip.String(),
		"--node-labels=" + strings.Join(kv, ","),
		"--v=1",
	}
	if cp, _ := c.Env.CredentialProviderFiles(); cp != nil {
		// the kubelet's real credential path: it runs the lab's plugin
		// and passes its answer to containerd through CRI auth
		args = append(args, "--image-credential-provider-config="+cp.Config, "--image-credential-provider-bin-dir="+cp.BinDir)
	}
	return append(args, c.o.KubeletArgs...)
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func shJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shq(a)
	}
	return strings.Join(q, " ")
}

// kubeletScript (re)starts the kubelet; StartKubelet runs it inside the
// node's namespaces with nsenter.
func (c *Cluster) kubeletScript(n *clusterNode) string {
	return "#!/bin/sh\nexec " + shJoin(c.kubeletArgs(n)) + " >>" + shq(filepath.Join(c.RunDir, "logs", n.host+"-kubelet.log")) + " 2>&1\n"
}

// startScript runs as `nsenter --net=NODE unshare --mount --uts
// --propagation slave sh start.sh`: it sets the node's hostname, gives it
// its own /var/lib, /var/log, /run, resolv.conf and hosts, masks the six
// sysctls, starts containerd, imports the sandbox image, starts kube-proxy
// and execs the kubelet. Every mount it makes dies with the mount
// namespace.
func (c *Cluster) startScript(n *clusterNode) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	d := n.dir
	p("#!/bin/sh\n# written by pullpath lab for node %s\nset -eu", n.name)
	p("hostname %s", shq(n.name))
	p("mount --bind %s /etc/resolv.conf", shq(d+"/resolv.conf"))
	p("mount --bind %s /etc/hosts", shq(d+"/hosts"))
	// The runtime's registry config where a real node has it, for what
	// reads the node's files (the probe in a sweep Pod mounts
	// /etc/containerd/certs.d): a tmpfs over /etc/containerd in this mount
	// namespace only, the node's certs.d bound into it, and an empty
	// docker certs.d beside it (the machine has no /etc/docker to mount over).
	p("mount -t tmpfs -o mode=0755 tmpfs /etc/containerd")
	p("mkdir -p /etc/containerd/certs.d /etc/containerd/docker-certs.d")
	p("mount --bind %s /etc/containerd/certs.d", shq(d+"/certs.d"))
	lp := layoutPaths(n, c.scen.Cluster.Nodes[n.host])
	if lp.configNode == "/etc/containerd/config.toml" {
		p("touch /etc/containerd/config.toml")
		p("mount --bind %s /etc/containerd/config.toml", shq(lp.configReal))
	}
	// cluster.nodes.HOST.proxy: the drop-in the running containerd's
	// environment comes from, in this mount namespace's /etc (what the
	// node's hostPath mounts of /etc show its Pods)
	if c.nodeProxy(n) != nil {
		p("mount --bind %s /etc/systemd", shq(d+"/etc/systemd"))
		p("if [ -f %s ]; then mount --bind %s /etc/environment; fi", shq(d+"/etc/environment"), shq(d+"/etc/environment"))
	}
	for _, s := range kubeletSysctls {
		p("mount --bind %s /proc/sys/%s", shq(d+"/sysctl/"+strings.ReplaceAll(s[0], "/", ".")), s[0])
	}
	p("mount --bind %s /var/lib", shq(d+"/var-lib"))
	p("mount --bind %s /var/log", shq(d+"/var-log"))
	// a private /run (containerd's shim sockets, runc's state), keeping
	// the run folder, which lives under /run, visible
	p("mount --bind %s /var/lib/.stage", shq(c.RunDir))
	p("mount -t tmpfs -o mode=0755 tmpfs /run")
	p("mkdir -p %s", shq(c.RunDir))
	p("mount --bind /var/lib/.stage %s", shq(c.RunDir))
	p("umount /var/lib/.stage")
	// containerd on the config at its node path (after /var/lib is the
	// node's), as the node's layout keeps it
	p("%scontainerd --config %s >>%s 2>&1 &", c.containerdEnv(n), shq(lp.configNode), shq(filepath.Join(c.RunDir, "logs", n.host+"-containerd.log")))
	p("echo $! > %s", shq(d+"/containerd.pid"))
	p("i=0; until [ -S %s ]; do i=$((i+1)); [ $i -lt 300 ] || { echo 'containerd did not start in 30s' >&2; exit 1; }; sleep 0.1; done", shq(n.sock()))
	p("ctr -a %s -n k8s.io images import --snapshotter overlayfs %s >/dev/null", shq(n.sock()), shq(c.pauseTar))
	p("while read -r img; do [ -z \"$img\" ] || ctr -a %s -n k8s.io images import --snapshotter overlayfs \"$img\" >/dev/null; done < %s", shq(n.sock()), shq(d+"/images.list"))
	// kube-proxy beside the kubelet, as its DaemonSet Pod would run: it
	// outlives a stopped kubelet, and dies with the node. Its start-up
	// clean-up of the other modes runs `modprobe -va ip_vs`
	// (pkg/proxy/ipvs/cleanup.go): a kernel module is the machine's, so
	// modprobe is /bin/false in this mount namespace.
	p("if m=$(command -v modprobe); then mount --bind /bin/false \"$m\"; fi")
	p("%s >>%s 2>&1 &", shJoin(c.kubeProxyArgs(n)), shq(filepath.Join(c.RunDir, "logs", n.host+"-kube-proxy.log")))
	p("echo $! > %s", shq(d+"/kube-proxy.pid"))
	p("exec %s", shq(d+"/kubelet.sh"))
	return b.String()
}
