package lab

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/report"
)

// Lab is a scenario's network with its services running: what Run probes,
// and what internal/lab/cluster starts a cluster in.
type Lab struct {
	Session *Session
	Network *Network
	// Env is what the probe, the hooks and a cluster's nodes use (nil until
	// the services' files are written).
	Env *Env
	// BuildMS and ServicesMS are how long the network and the services took.
	BuildMS, ServicesMS float64

	scenario *scenario.Scenario
	svcs     *services
	nodeRT   *nodeRuntime // the node's running containerd (node.proxy)
}

// StartOptions tune Start.
type StartOptions struct {
	// Self is the pullpath binary re-executed as `lab serve` in each host
	// that runs a service.
	Self string
	// Keep lets the services outlive this process (lab up).
	Keep bool
	// Progress receives the run's first line ("NAME: building N namespaces
	// (prefix P)").
	Progress io.Writer
	// ImageBase, when set, is the first layer of the registry's image and
	// ImageCmd its command: internal/lab/cluster puts the pause binary there
	// so that its kubelets can run the image.
	ImageBase []byte
	ImageCmd  []string
}

// Start claims a run prefix, builds the scenario's network (checking the
// safety rules), writes the node's resolver and hosts files, writes the
// services' files and starts them, and waits until every link is active.
// On error it returns the Lab too when the session exists (nil before),
// for the caller to save its logs and Close it.
func Start(ctx context.Context, s *scenario.Scenario, o StartOptions) (*Lab, error) {
	if err := needLinux(); err != nil {
		return nil, err
	}
	sess, err := NewSession(ctx)
	if err != nil {
		return nil, err
	}
	l := &Lab{Session: sess, scenario: s}
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "%s: building %d namespaces (prefix %s)\n", s.Name, len(s.Hosts), sess.Prefix)
	}
	// 1. network
	phase := time.Now()
	l.Network, err = Build(ctx, s, sess.Prefix)
	if err == nil {
		err = l.Network.Verify(ctx)
	}
	l.BuildMS = msSince(phase)
	if err != nil {
		return l, err
	}
	if _, err := l.Network.WriteNodeFiles(); err != nil {
		return l, err
	}
	// 2. services
	phase = time.Now()
	env, configs, err := prepare(ctx, s, l.Network, sess.RunDir, o)
	if err != nil {
		return l, err
	}
	env.Self = o.Self
	l.Env = env
	l.svcs, err = startServices(ctx, l.Network, o.Self, sess.RunDir, configs, o.Keep)
	l.ServicesMS = msSince(phase)
	if err != nil {
		return l, err
	}
	if err := l.Network.WaitLinks(ctx); err != nil {
		return l, err
	}
	if s.Node.Proxy != nil {
		if l.nodeRT, err = startNodeRuntime(ctx, l.Network.NS[s.Node.Host], sess.RunDir, env.RuntimeEnv, o.Keep); err != nil {
			return l, err
		}
	}
	if err := breakUpstream(ctx, s, l.Network); err != nil {
		return l, err
	}
	l.ServicesMS = msSince(phase)
	return l, nil
}

// Probe runs `pullpath probe -o json` in the node's namespace and returns
// its report; the probe's stderr is kept in the run's logs.
func (l *Lab) Probe(ctx context.Context) (*report.ProbeReport, error) {
	rep, stderr, err := probe(ctx, l.scenario, l.Env)
	if stderr != "" {
		os.WriteFile(filepath.Join(l.Session.RunDir, "logs", "probe.stderr"), []byte(stderr), 0o644)
	}
	return rep, err
}

// Logs is the run's logs folder: one log per host that runs services,
// probe.stderr, and a cluster's component logs.
func (l *Lab) Logs() string { return filepath.Join(l.Session.RunDir, "logs") }

// SaveLogs copies the run's logs to ROOT/pullpath-lab-NAME-PREFIX (ROOT
// default os.TempDir()) before a teardown removes them, and returns where.
func (l *Lab) SaveLogs(root string) string {
	return keepLogs(l.Session.RunDir, root, l.scenario.Name, l.Session.Prefix)
}

// StopServices kills the services (Close does too).
func (l *Lab) StopServices() {
	l.svcs.stop()
	l.nodeRT.stop()
	removeProxyDir(l.Session.RunDir)
}

// Close stops the services and tears down everything under the run's
// prefix (namespaces, processes, mounts, cgroups) and its folder.
func (l *Lab) Close() error {
	l.StopServices()
	return l.Session.Close()
}

// Keep leaves the lab running after this process exits (lab up): the
// services are let go and the run is recorded for `lab down`.
func (l *Lab) Keep(k *KeptRun) error {
	if l.svcs != nil {
		l.svcs.detach()
	}
	return l.Session.Keep(k)
}
