package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pullpath/pullpath/internal/childproc"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/units"
)

// Service networking: a real kube-proxy per node, in nftables mode, in the
// node's network and mount namespaces (started by its start script beside
// containerd), so that Pods and hostNetwork Pods reach the kubernetes
// Service's ClusterIP (and any other Service) as on a real node.
//
// What it must not touch, read from kube-proxy's sources (1.37:
// cmd/kube-proxy/app/server_linux.go, pkg/proxy/conntrack/sysctls.go,
// pkg/proxy/nftables): its only sysctl writes are the conntrack ones, and
// of those nf_conntrack_max and the module's hashsize are machine-wide.
// conntrack.maxPerCore 0 leaves both alone, and zero timeouts leave the
// per-namespace ones as they are: kube-proxy writes no sysctl at all. The
// nftables proxier writes none (route_localnet is the iptables proxier's,
// for localhost NodePorts, which nftables mode does not have). Its tables
// (ip kube-proxy) live in the node's namespace; IPv6 is off there, so it
// runs single-stack. oomScoreAdj 0: this machine drops CAP_SYS_RESOURCE,
// so the default -999 cannot be set.
//
// Pod IPs are not routed beyond their node in the lab (no router knows the
// pod ranges), so nftables.masqueradeAll: traffic to a Service leaves the
// node from the node's address, and the answers come back.

// proxyHealthz is where each node's kube-proxy answers /healthz, inside the
// node's network namespace.
const proxyHealthz = "127.0.0.1:10256"

func (c *Cluster) kubeProxyConfig(n *clusterNode) string {
	return fmt.Sprintf(`# written by pullpath lab for node %s
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clientConnection:
  kubeconfig: %s
hostnameOverride: %s
bindAddress: %q
healthzBindAddress: %s
metricsBindAddress: 127.0.0.1:10249
clusterCIDR: %s
detectLocalMode: ClusterCIDR
nftables:
  masqueradeAll: true
  minSyncPeriod: 0s
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, n.name, filepath.Join(n.dir, "kube-proxy.kubeconfig"), n.name, n.ip.String(), proxyHealthz, c.scen.Cluster.PodRange())
}

// writeProxyFiles writes the node's kube-proxy configuration and its
// kubeconfig (system:kube-proxy, which the bootstrap RBAC binds to
// system:node-proxier).
func (c *Cluster) writeProxyFiles(n *clusterNode) error {
	if err := c.pki.kubeconfig(filepath.Join(n.dir, "kube-proxy.kubeconfig"), c.internalServer(n), "kube-proxy-"+n.host,
		"system:kube-proxy", nil); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(n.dir, "kube-proxy.yaml"), []byte(c.kubeProxyConfig(n)), 0o644)
}

// routeServices gives the node a route for the Service range the way it
// reaches the apiserver (the same next hop, or the same link). A real node
// needs none: its default route covers ClusterIPs, and kube-proxy's DNAT
// (nat output) rewrites the destination before the packet leaves. Lab
// nodes have no default route, and without a route the kernel refuses a
// hostNetwork Pod's connect to a ClusterIP (network is unreachable) before
// any nftables hook sees it.
func (c *Cluster) routeServices(ctx context.Context, n *clusterNode) error {
	if n.ip.Is6() {
		// an IPv6-only node has no IPv4 address to reach the lab's IPv4
		// Service range from (an IPv6 cluster's Services are IPv6)
		return nil
	}
	ns := c.lab.Network.NS[n.host]
	out, err := lab.Command(ctx, "ip", "-n", ns, "-4", "-o", "route", "get", c.apiserverIP.String()).CombinedOutput()
	if ctx.Err() != nil {
		return fmt.Errorf("node %s: %w", n.host, ctx.Err())
	}
	if err != nil {
		return fmt.Errorf("node %s: no route to the apiserver %s: %s", n.host, c.apiserverIP, units.OneLine(string(out)))
	}
	// "10.0.30.10 via 10.0.1.1 dev eth0 src 10.0.1.10 uid 0 \    cache"
	f := strings.Fields(string(out))
	var via, dev string
	for i := 0; i+1 < len(f); i++ {
		switch f[i] {
		case "via":
			via = f[i+1]
		case "dev":
			dev = f[i+1]
		}
	}
	if dev == "" {
		return fmt.Errorf("node %s: route to the apiserver %s names no device: %s", n.host, c.apiserverIP, units.OneLine(string(out)))
	}
	args := []string{"-n", ns, "route", "replace", c.scen.Cluster.ServiceRange().Masked().String()}
	if via != "" {
		args = append(args, "via", via)
	}
	args = append(args, "dev", dev, "src", n.ip.String())
	if out, err := lab.Command(ctx, "ip", args...).CombinedOutput(); ctx.Err() != nil {
		return fmt.Errorf("node %s: %w", n.host, ctx.Err())
	} else if err != nil {
		return fmt.Errorf("node %s: route for the Service range: %v: %s", n.host, err, units.OneLine(string(out)))
	}
	return nil
}

// kubeProxyArgs is the node's kube-proxy command line.
func (c *Cluster) kubeProxyArgs(n *clusterNode) []string {
	return []string{filepath.Join(c.bin, "kube-proxy"), "--config=" + filepath.Join(n.dir, "kube-proxy.yaml"), "--v=1"}
}

// waitProxy waits (until deadline) for the node's kube-proxy to answer
// /healthz with 200, which it does once its first sync wrote the
// Services' rules; it fails early if kube-proxy exited.
func (c *Cluster) waitProxy(ctx context.Context, n *clusterNode, deadline time.Time) error {
	ns := c.lab.Network.NS[n.host]
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return lab.DialInNamespace(ctx, ns, network, addr)
	}}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 2 * time.Second}
	log := filepath.Join(c.RunDir, "logs", n.host+"-kube-proxy.log")
	last := "no answer yet"
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+proxyHealthz+"/healthz", nil)
		resp, err := hc.Do(req)
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		if pid := pidOf(filepath.Join(n.dir, "kube-proxy.pid")); pid > 0 && syscall.Kill(pid, 0) != nil {
			return fmt.Errorf("node %s: kube-proxy exited: %s", n.host, childproc.LastLines(log, 3))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s: kube-proxy not healthy at %s (last: %s); its log: %s", n.host, proxyHealthz, units.OneLine(last),
				childproc.LastLines(log, 3))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// pidOf reads a pid file (0 when it has none yet).
func pidOf(file string) int {
	b, _ := os.ReadFile(file)
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// containerdEnv is the `env K=V ... ` prefix of a node's containerd: its
// egress proxy variables (cluster.nodes.HOST.proxy), which its CRI pull
// follows, as the node's drop-in gives them; "" without.
func (c *Cluster) containerdEnv(n *clusterNode) string {
	np := c.nodeProxy(n)
	if np == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("env ")
	for _, kv := range np.RunningEnv() {
		b.WriteString(shq(kv) + " ")
	}
	return b.String()
}

// nodeProxy is node n's containerd proxy settings (cluster.nodes.HOST.proxy),
// nil without.
func (c *Cluster) nodeProxy(n *clusterNode) *scenario.NodeProxy {
	if spec := c.scen.Cluster.Nodes[n.host]; spec != nil {
		return spec.Proxy
	}
	return nil
}
