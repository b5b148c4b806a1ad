package monitorlab

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/testenv/deploytest"
	"github.com/pullpath/pullpath/internal/testenv/kwait"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// TestDaemonSetRunsOnEveryLabNode applies deploy/monitor as it is
// (kustomization order; minimal CRDs stand in for the Prometheus operator)
// to a lab cluster with real kubelets, and waits for the agent to run on
// every node; then it scrapes one agent from inside the node's network.
func TestDaemonSetRunsOnEveryLabNode(t *testing.T) {
	c := labtest.Require(t, "cluster-healthy")
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	labtest.ImportAgentImage(ctx, t, c)
	if err := deploytest.ApplyMonitor(ctx, c.Config, nil); err != nil {
		t.Fatal(err)
	}

	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, n := range nodes.Items {
		want[n.Name] = true
	}
	if len(want) < 2 {
		t.Fatalf("the lab cluster has %d nodes, want at least 2", len(want))
	}
	// watched, bounded by ctx: a ready, running agent Pod on every node,
	// and the DaemonSet counting them all ready
	end, _ := ctx.Deadline()
	running := func(pl []*corev1.Pod) map[string]bool {
		on := map[string]bool{}
		for _, p := range pl {
			ready := false
			for _, cs := range p.Status.ContainerStatuses {
				ready = cs.Ready && cs.State.Running != nil
			}
			if p.Status.Phase == corev1.PodRunning && ready {
				on[p.Spec.NodeName] = true
			}
		}
		return on
	}
	everyNode := func(on map[string]bool) bool {
		all := len(on) == len(want)
		for n := range want {
			all = all && on[n]
		}
		return all
	}
	pl, err := kwait.Wait(ctx, time.Until(end), "an agent Pod running and ready on every lab node",
		kwait.Pods(c.Client, "pullpath-monitor", "app.kubernetes.io/name=pullpath-monitor"),
		func(pl []*corev1.Pod) bool { return everyNode(running(pl)) })
	if err != nil {
		for _, p := range pl {
			b, _ := c.Client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Previous: true}).DoRaw(t.Context())
			t.Logf("logs of %s on %s (previous container):\n%s", p.Name, p.Spec.NodeName, b)
		}
		t.Fatalf("the DaemonSet did not run on every lab node: %v", err)
	}
	ds := kwait.One(ctx, t, time.Until(end), fmt.Sprintf("DaemonSet pullpath-monitor: %d ready", len(want)),
		kwait.DaemonSet(c.Client, "pullpath-monitor", "pullpath-monitor"),
		func(ds *appsv1.DaemonSet) bool { return int(ds.Status.NumberReady) == len(want) })
	last := fmt.Sprintf("desired %d, ready %d, running on %v", ds.Status.DesiredNumberScheduled, ds.Status.NumberReady, running(pl))
	t.Logf("DaemonSet running: %s", last)

	// A scrape of one agent, from inside its node's network namespace.
	p := pl[0]
	host := ""
	for _, h := range c.Hosts() {
		if c.NodeName(h) == p.Spec.NodeName {
			host = h
		}
	}
	var body string
	deadline := time.Now().Add(60 * time.Second)
	stick := time.NewTicker(time.Second)
	defer stick.Stop()
	for {
		body, err = scrape(ctx, c.Namespace(host), net.JoinHostPort(p.Status.HostIP, "9090"))
		if err == nil && strings.Contains(body, "pullpath_probe_runs_total") && strings.Contains(body, `pullpath_node_info{node="`+p.Spec.NodeName+`"`) &&
			strings.Contains(body, "pullpath_probe_verdict_code{") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scrape of %s on %s: %v\n%s", p.Name, p.Spec.NodeName, err, body)
		}
		<-stick.C
	}
	logs, _ := c.Client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	t.Logf("logs of %s:\n%s", p.Name, logs)
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "pullpath_") {
			t.Log(l)
		}
	}
}

func scrape(ctx context.Context, ns, addr string) (string, error) {
	tr := &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
		return lab.DialInNamespace(ctx, ns, network, a)
	}}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/metrics", nil)
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
