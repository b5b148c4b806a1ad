// Package controlplane starts a real etcd and kube-apiserver on loopback for
// tests and benchmarks, from binaries that hack/controlplane.sh builds into
// test/controlplane/bin.
//
// Everything listens on 127.0.0.1 only. The apiserver serves TLS with a
// certificate from a CA made for each start, and accepts one admin bearer
// token (group system:masters). Nothing runs Pods: there is no kubelet,
// scheduler or controller-manager, so a test writes Node and Pod status
// itself through the status subresource.
package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/pullpath/pullpath/internal/childproc"
)

// ErrBinariesMissing is wrapped by Start's error when etcd or kube-apiserver
// is not in the binary directory.
var ErrBinariesMissing = errors.New("control-plane binaries missing (run hack/controlplane.sh)")

// BinDirEnv names an environment variable that, when set, overrides the
// default binary directory.
const BinDirEnv = childproc.BinDirEnv

// DefaultReadyTimeout bounds how long Start waits for /readyz.
const DefaultReadyTimeout = 60 * time.Second

// Options configures Start. The zero value is ready to use.
type Options struct {
	// BinDir holds the etcd and kube-apiserver binaries. Default: the
	// environment variable PULLPATH_CONTROLPLANE_BIN, else
	// <repo>/test/controlplane/bin, where <repo> is the first directory
	// holding a go.mod found by walking up from the working directory.
	BinDir string
	// WorkDir is where a fresh temporary directory for data, keys and the
	// kubeconfig is made; Stop removes that directory. Default: os.TempDir().
	WorkDir string
	// ReadyTimeout bounds the wait for etcd's /health and the apiserver's
	// /readyz together. Default: DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// LogOutput, when set, also receives both processes' output as it is
	// written. It is always captured for Logs either way.
	LogOutput io.Writer
	// APIServerArgs are extra kube-apiserver flags, appended after the
	// defaults (a later flag wins).
	APIServerArgs []string
}

// ControlPlane is a running etcd and kube-apiserver.
type ControlPlane struct {
	// Kubeconfig is the path of a kubeconfig file (token auth, the test CA)
	// that client-go and `--kubeconfig` can use.
	Kubeconfig string
	// Config is a client-go configuration for the admin user.
	Config *rest.Config
	// Server is the apiserver's URL, https://127.0.0.1:PORT.
	Server string
	// EtcdURL is etcd's client URL, http://127.0.0.1:PORT.
	EtcdURL string

	dir       string
	etcd      *childproc.Proc
	apiserver *childproc.Proc
	etcdLogs  *logBuffer
	apiLogs   *logBuffer
	ports     []int // every port this control plane listens on

	stopOnce sync.Once
	stopErr  error
}

// Start starts etcd, then kube-apiserver, and returns once /readyz answers
// ok. ctx bounds the start only: the processes run until Stop. On error
// nothing is left running and the message carries the last log lines.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	// 1. Find the binaries.
	binDir, err := resolveBinDir(opts.BinDir)
	if err != nil {
		return nil, err
	}
	if missing := childproc.MissingBinary(binDir, "etcd", "kube-apiserver"); missing != "" {
		return nil, fmt.Errorf("%w: %s is missing", ErrBinariesMissing, missing)
	}
	etcdBin := filepath.Join(binDir, "etcd")
	apiBin := filepath.Join(binDir, "kube-apiserver")
	timeout := opts.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// 2. A work directory with keys, certificates and the token file.
	dir, err := os.MkdirTemp(opts.WorkDir, "pullpath-controlplane-")
	if err != nil {
		return nil, fmt.Errorf("create control-plane work directory in %q: %w", opts.WorkDir, err)
	}
	c := &ControlPlane{
		dir:      dir,
		etcdLogs: &logBuffer{tee: opts.LogOutput},
		apiLogs:  &logBuffer{tee: opts.LogOutput},
	}
	creds, err := writeCredentials(dir)
	if err != nil {
		c.Stop()
		return nil, err
	}

	// 3. etcd, and wait for its /health.
	if err := c.startEtcd(ctx, etcdBin); err != nil {
		c.Stop()
		return nil, fmt.Errorf("%w\n--- last etcd log lines ---\n%s", err, c.etcdLogs.tail(20))
	}

	// 4. kube-apiserver, and wait for its /readyz.
	if err := c.startAPIServer(ctx, apiBin, creds, opts.APIServerArgs); err != nil {
		c.Stop()
		return nil, fmt.Errorf("%w\n--- last kube-apiserver log lines ---\n%s", err, c.apiLogs.tail(30))
	}

	// 5. A kubeconfig and a client configuration.
	c.Config = &rest.Config{
		Host:            c.Server,
		BearerToken:     creds.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: creds.caPEM},
		QPS:             -1, // no client-side throttling: benchmarks load many objects
	}
	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(c.Kubeconfig, c.Server, creds); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// Client returns a typed clientset for the admin user.
func (c *ControlPlane) Client() (kubernetes.Interface, error) {
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("clientset for %s: %w", c.Server, err)
	}
	return cs, nil
}

// Logs returns the captured output of both processes (the last 4 MiB of
// each), for a failed test to print.
func (c *ControlPlane) Logs() string {
	var b strings.Builder
	b.WriteString("--- etcd ---\n")
	b.WriteString(c.etcdLogs.String())
	b.WriteString("\n--- kube-apiserver ---\n")
	b.WriteString(c.apiLogs.String())
	return b.String()
}

// Stop stops kube-apiserver, then etcd, and removes the work directory.
// It may be called more than once; later calls return the first result.
func (c *ControlPlane) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		for _, p := range []*childproc.Proc{c.apiserver, c.etcd} {
			if p != nil {
				errs = append(errs, p.Stop(stopGrace))
			}
		}
		if c.dir != "" {
			if err := os.RemoveAll(c.dir); err != nil {
				errs = append(errs, fmt.Errorf("remove control-plane work directory: %w", err))
			}
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

// BinDir is the directory hack/controlplane.sh builds into (and the tests
// take their binaries from): $PULLPATH_CONTROLPLANE_BIN, else
// <repo>/test/controlplane/bin. The chart's tests find helm there.
func BinDir() (string, error) { return resolveBinDir("") }

// resolveBinDir applies BinDir's defaults (childproc.BinDir).
func resolveBinDir(dir string) (string, error) {
	d, err := childproc.BinDir(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBinariesMissing, err)
	}
	return d, nil
}
