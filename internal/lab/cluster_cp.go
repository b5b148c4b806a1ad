package lab

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// clusterProc is one process of the cluster (a control-plane component, or
// a node's start script that runs containerd and the kubelet).
type clusterProc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startProc starts argv with a clean environment, its output in logFile,
// in its own process group; unless keep, it dies with this process.
func startProc(name, logFile string, keep bool, argv ...string) (*clusterProc, error) {
	lf, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = cleanEnv()
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if !keep {
		setPdeathsig(cmd.SysProcAttr)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %v", name, err)
	}
	p := &clusterProc{name: name, cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *clusterProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// kill SIGKILLs the process group and waits (bounded) for the leader.
func (p *clusterProc) kill() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
}

// lastLines is the end of a log file, on one line, for an error.
func lastLines(file string, n int) string {
	b, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return oneLine(strings.Join(lines, " | "))
}

const apiserverPort = 6443

// startControlPlane starts etcd, kube-apiserver, kube-controller-manager
// and kube-scheduler in the control plane's namespace and waits for
// /readyz (through DialInNamespace: nothing listens in the root namespace).
func (c *Cluster) startControlPlane(ctx context.Context) error {
	t := c.topo
	ns := c.net.NS[t.Cluster.ControlPlane]
	dir := filepath.Join(c.dir, "cp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ip := c.apiserverIP.String()
	p := c.pki
	srvCert, srvKey, err := p.issue("apiserver", "kube-apiserver", nil,
		[]string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"},
		[]net.IP{net.ParseIP(ip), net.IPv4(127, 0, 0, 1), net.IP(firstServiceIP(t.Cluster.serviceCIDR()).AsSlice())})
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
	logs := filepath.Join(c.runDir, "logs")
	etcd, err := startProc("etcd", filepath.Join(logs, "etcd.log"), c.keep, in("etcd",
		"--name=lab", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
		"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
		"--initial-cluster=lab=http://127.0.0.1:2380", "--unsafe-no-fsync", "--log-level=warn")...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, etcd)
	api, err := startProc("kube-apiserver", filepath.Join(logs, "kube-apiserver.log"), c.keep, in("kube-apiserver",
		"--etcd-servers=http://127.0.0.1:2379",
		"--bind-address=0.0.0.0", fmt.Sprintf("--secure-port=%d", apiserverPort), "--advertise-address="+ip,
		"--cert-dir="+filepath.Join(dir, "certs"),
		"--tls-cert-file="+srvCert, "--tls-private-key-file="+srvKey,
		"--client-ca-file="+p.CAFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+p.SAPub, "--service-account-signing-key-file="+p.SAKey,
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--service-cluster-ip-range="+t.Cluster.serviceCIDR().String(),
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
	cm, err := startProc("kube-controller-manager", filepath.Join(logs, "kube-controller-manager.log"), c.keep, in("kube-controller-manager",
		"--kubeconfig="+cmKC, "--controllers=*", "--use-service-account-credentials", "--leader-elect=false",
		"--service-account-private-key-file="+p.SAKey, "--root-ca-file="+p.CAFile,
		"--cluster-signing-cert-file="+p.CAFile, "--cluster-signing-key-file="+p.CAKey,
		"--node-monitor-period=2s", "--node-monitor-grace-period=16s",
		"--secure-port=0", "--profiling=false")...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, cm)
	sched, err := startProc("kube-scheduler", filepath.Join(logs, "kube-scheduler.log"), c.keep, in("kube-scheduler",
		"--kubeconfig="+schedKC, "--leader-elect=false", "--secure-port=0", "--profiling=false")...)
	if err != nil {
		return err
	}
	c.procs = append(c.procs, sched)
	return nil
}

// waitAPIServer polls /readyz through the control plane's namespace.
func (c *Cluster) waitAPIServer(ctx context.Context, api, etcd *clusterProc) error {
	ns := c.net.NS[c.topo.Cluster.ControlPlane]
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
			return DialInNamespace(ctx, ns, network, addr)
		},
	}}
	url := fmt.Sprintf("https://%s:%d/readyz", c.apiserverIP, apiserverPort)
	deadline := time.Now().Add(90 * time.Second)
	last := "no answer yet"
	for {
		if api.exited() {
			return fmt.Errorf("kube-apiserver exited: %s", lastLines(api.log, 3))
		}
		if etcd.exited() {
			return fmt.Errorf("etcd exited: %s", lastLines(etcd.log, 3))
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
			return fmt.Errorf("kube-apiserver not ready at %s after 90s (last: %s)", url, oneLine(last))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
