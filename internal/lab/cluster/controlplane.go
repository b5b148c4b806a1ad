package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/pullpath/pullpath/internal/childproc"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/units"
)

// startProc starts argv with a clean environment, its output in the run's
// logs/LOGNAME, in its own process group; unless the cluster is kept, it
// dies with this process.
func (c *Cluster) startProc(name, logName string, argv ...string) (*childproc.Proc, error) {
	return childproc.StartLogged(name, filepath.Join(c.RunDir, "logs", logName), argv,
		childproc.Options{Env: lab.CleanEnv(), Keep: c.o.Keep})
}

const apiserverPort = 6443

// startControlPlane starts etcd, kube-apiserver, kube-controller-manager
// and kube-scheduler in the control plane's namespace and waits for
// /readyz (through DialInNamespace: nothing listens in the root namespace).
func (c *Cluster) startControlPlane(ctx context.Context) error {
	t := c.scen
	ns := c.lab.Network.NS[t.Cluster.ControlPlane]
	dir := filepath.Join(c.dir, "cp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ip := c.apiserverIP.String()
	p := c.pki
	srvCert, srvKey, err := p.issue("apiserver", "kube-apiserver", nil,
		[]string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"},
		append(cpIPs(t.HostAddrs(t.Cluster.ControlPlane)), net.IPv4(127, 0, 0, 1), net.IP(t.Cluster.APIServiceIP().AsSlice())))
	if err != nil {
		return err
	}
	kcCert, kcKey, err := p.issue("apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}, nil, nil)
	if err != nil {
		return err
	}
	local := fmt.Sprintf("https://127.0.0.1:%d", apiserverPort)
	cmKC, schedKC := filepath.Join(dir, "controller-manager.kubeconfig"), filepath.Join(dir, "scheduler.kubeconfig")
	if err := p.kubeconfig(cmKC, local, "controller-manager", "system:kube-controller-manager", nil); err != nil {
		return err
	}
	if err := p.kubeconfig(schedKC, local, "scheduler", "system:kube-scheduler", nil); err != nil {
		return err
	}
	c.adminCert, c.adminKey, err = p.issue("admin", "kubernetes-admin", []string{"system:masters"}, nil, nil)
	if err != nil {
		return err
	}
	in := func(bin string, args ...string) []string {
		return append([]string{"ip", "netns", "exec", ns, filepath.Join(c.bin, bin)}, args...)
	}
	etcd, err := c.startProc("etcd", "etcd.log", in("etcd",
		"--name=lab", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
		"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
		"--initial-cluster=lab=http://127.0.0.1:2380", "--unsafe-no-fsync", "--log-level=warn")...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, etcd)
	api, err := c.startProc("kube-apiserver", "kube-apiserver.log", in("kube-apiserver",
		"--etcd-servers=http://127.0.0.1:2379",
		"--bind-address=0.0.0.0", fmt.Sprintf("--secure-port=%d", apiserverPort), "--advertise-address="+ip,
		"--cert-dir="+filepath.Join(dir, "certs"),
		"--tls-cert-file="+srvCert, "--tls-private-key-file="+srvKey,
		"--client-ca-file="+p.CAFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+p.SAPub, "--service-account-signing-key-file="+p.SAKey,
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--service-cluster-ip-range="+t.Cluster.ServiceRange().String(),
		"--allow-privileged=true",
		"--kubelet-client-certificate="+kcCert, "--kubelet-client-key="+kcKey,
		"--kubelet-preferred-address-types=InternalIP",
		"--profiling=false", "--v=0")...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, api)
	if err := c.waitAPIServer(ctx, api, etcd); err != nil {
		return err
	}
	cm, err := c.startProc("kube-controller-manager", "kube-controller-manager.log", in("kube-controller-manager",
		"--kubeconfig="+cmKC, "--controllers=*", "--use-service-account-credentials", "--leader-elect=false",
		"--service-account-private-key-file="+p.SAKey, "--root-ca-file="+p.CAFile,
		"--cluster-signing-cert-file="+p.CAFile, "--cluster-signing-key-file="+p.CAKey,
		"--node-monitor-period=2s", "--node-monitor-grace-period=16s",
		"--secure-port=0", "--profiling=false")...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, cm)
	sched, err := c.startProc("kube-scheduler", "kube-scheduler.log", in("kube-scheduler",
		"--kubeconfig="+schedKC, "--leader-elect=false", "--secure-port=0", "--profiling=false")...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, sched)
	return nil
}

// waitAPIServer polls /readyz through the control plane's namespace.
func (c *Cluster) waitAPIServer(ctx context.Context, api, etcd *childproc.Proc) error {
	ns := c.lab.Network.NS[c.scen.Cluster.ControlPlane]
	pool := x509.NewCertPool()
	caPEM, _ := os.ReadFile(c.pki.CAFile)
	pool.AppendCertsFromPEM(caPEM)
	cert, err := tls.LoadX509KeyPair(c.adminCert, c.adminKey)
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return lab.DialInNamespace(ctx, ns, network, addr)
		},
	}}
	url := fmt.Sprintf("https://%s:%d/readyz", c.apiserverIP, apiserverPort)
	deadline := time.Now().Add(90 * time.Second)
	last := "no answer yet"
	for {
		if !api.Running() {
			return fmt.Errorf("kube-apiserver exited: %s", childproc.LastLines(api.Log, 3))
		}
		if !etcd.Running() {
			return fmt.Errorf("etcd exited: %s", childproc.LastLines(etcd.Log, 3))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := hc.Do(req)
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			last = fmt.Sprintf("HTTP %d: %.200s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver not ready at %s after 90s (last: %s)", url, units.OneLine(last))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// cpIPs are the control plane's addresses for the serving certificate's
// SANs: every one, so a node of either family verifies the apiserver.
func cpIPs(addrs []netip.Addr) []net.IP {
	out := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, net.IP(a.AsSlice()))
	}
	return out
}
