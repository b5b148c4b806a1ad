package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/childproc"
)

// pollInterval is how often Start asks a starting process whether it is
// ready.
const pollInterval = 100 * time.Millisecond

// startEtcd starts etcd on two fresh loopback ports and waits for /health.
func (c *ControlPlane) startEtcd(ctx context.Context, bin string) error {
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	client, peer := "http://"+hostPort(ports[0]), "http://"+hostPort(ports[1])
	args := []string{
		"--name=pullpath-test",
		"--data-dir=" + filepath.Join(c.dir, "etcd"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=pullpath-test=" + peer,
		"--unsafe-no-fsync",
	}
	p, err := startProcess("etcd", bin, args, c.etcdLogs)
	if err != nil {
		return err
	}
	c.etcd, c.EtcdURL = p, client
	c.ports = append(c.ports, ports...)

	hc := &http.Client{Timeout: 2 * time.Second}
	return waitReady(ctx, p, hc, client+"/health", "", func(body string) bool {
		return strings.Contains(body, `"health":"true"`)
	})
}

// startAPIServer starts kube-apiserver on a fresh loopback port against
// the running etcd and waits for /readyz.
func (c *ControlPlane) startAPIServer(ctx context.Context, bin string, creds *credentials, extra []string) error {
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	args := []string{
		"--etcd-servers=" + c.EtcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports[0]),
		"--cert-dir=" + filepath.Join(c.dir, "certs"),
		"--tls-cert-file=" + creds.certFile,
		"--tls-private-key-file=" + creds.keyFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + creds.saPubFile,
		"--service-account-signing-key-file=" + creds.saKeyFile,
		"--token-auth-file=" + creds.tokensFile,
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		// There is no endpoint reconciler for a loopback advertise address,
		// and no controller-manager to create default ServiceAccounts.
		"--endpoint-reconciler-type=none",
		"--disable-admission-plugins=ServiceAccount",
		"--profiling=false",
	}
	args = append(args, extra...)
	p, err := startProcess("kube-apiserver", bin, args, c.apiLogs)
	if err != nil {
		return err
	}
	c.apiserver, c.Server = p, "https://"+hostPort(ports[0])
	c.ports = append(c.ports, ports...)

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(creds.caPEM)
	hc := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	return waitReady(ctx, p, hc, c.Server+"/readyz", creds.token, func(body string) bool {
		return strings.TrimSpace(body) == "ok"
	})
}

// waitReady polls url until ok accepts a 200 answer's body, the process
// exits, or ctx ends. The error names the last answer seen.
func waitReady(ctx context.Context, p *childproc.Proc, hc *http.Client, url, token string, ok func(string) bool) error {
	last := "no answer yet"
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if done, err := p.Exited(); done {
			return fmt.Errorf("%s exited before it was ready: %v", p.Name, err)
		}
		status, body, err := get(ctx, hc, url, token)
		switch {
		case err != nil:
			last = err.Error()
		case status == http.StatusOK && ok(body):
			return nil
		default:
			last = fmt.Sprintf("HTTP %d: %.300s", status, body)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s: %w (last: %s)", p.Name, url, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// get sends one GET and returns the status and up to 64 KiB of body.
func get(ctx context.Context, hc *http.Client, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(body), err
}
