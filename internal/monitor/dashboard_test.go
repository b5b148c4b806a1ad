package monitor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/monitor/events"
	"github.com/pullpath/pullpath/internal/testenv"
	"github.com/pullpath/pullpath/internal/testenv/controlplane"
)

const dashboardFile = "../../deploy/helm/pullpath/files/dashboard.json"

type dashboard struct {
	Title  string `json:"title"`
	Panels []struct {
		Type        string `json:"type"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Targets     []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// grafanaVars stands in for Grafana's variables: every registry host,
// pool and zone ("All"), and windows a test's minutes of samples fill.
var grafanaVars = strings.NewReplacer("$image_host", ".*", "$pool", ".*", "$zone", ".*", "$__rate_interval", "1m", "$__range", "5m")

// TestDashboardQueriesReturnSeries runs every query of the Grafana
// dashboard against a real Prometheus that scrapes two node agents (one
// healthy node, one whose hosts file breaks its blob host) and the events
// exporter on a real kube-apiserver holding pull-failure Events and a Pod
// in back-off: a query that returns nothing is a broken panel. Each panel
// states the question it answers, and docs/monitor.md lists it.
func TestDashboardQueriesReturnSeries(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	docs, err := os.ReadFile("../../docs/monitor.md")
	if err != nil {
		t.Fatal(err)
	}
	queries := 0
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if !strings.Contains(p.Description, "?") {
			t.Errorf("panel %q: its description is not the question it answers: %q", p.Title, p.Description)
		}
		if !strings.Contains(string(docs), p.Title) {
			t.Errorf("panel %q is not listed in docs/monitor.md", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		queries += len(p.Targets)
	}
	if queries < 10 {
		t.Fatalf("the dashboard has %d queries, want the full set", queries)
	}

	// The events exporter on a real apiserver: two groups, failures in one.
	cp := controlplane.Require(t)
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, n := range []struct{ name, pool, zone string }{{"node-a", "pool-a", "zone-1"}, {"node-b", "pool-b", "zone-2"}} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: map[string]string{"eks.amazonaws.com/nodegroup": n.pool, "topology.kubernetes.io/zone": n.zone}}}
		if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	x, err := events.New(cp.Config, events.Options{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	xctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- x.Run(xctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Errorf("the exporter did not stop within 30s")
		}
	})
	waitFor(t, 60*time.Second, "the exporter's first Lists", func() (bool, string) { return x.Ready(), "not ready" })
	const img = "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/shop/checkout:1.4.2"
	const runtimeMsg = `rpc error: code = DeadlineExceeded desc = failed to pull and unpack image "` + img + `": failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://prod-ap-northeast-2-starport-layer-bucket.s3.ap-northeast-2.amazonaws.com/docker/registry/v2/blobs/sha256/4f/4f1c/data": dial tcp 10.0.20.10:443: i/o timeout`
	failure := func(name string) {
		t.Helper()
		now := metav1.Now()
		e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web", APIVersion: "v1"},
			Type:           corev1.EventTypeWarning, Reason: "Failed", Message: `Failed to pull image "` + img + `": ` + runtimeMsg, Count: 1,
			Source: corev1.EventSource{Component: "kubelet", Host: "node-b"}, FirstTimestamp: now, LastTimestamp: now}
		if _, err := c.CoreV1().Events("default").Create(ctx, e, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	failure("web.1")
	pod, err := c.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "node-b", Containers: []corev1.Container{{Name: "app", Image: img}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: img,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: runtimeMsg}}}}}
	if _, err := c.CoreV1().Pods("default").UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Two node agents on the lab's loopback services.
	image := labsvc.ImageSpec{Repository: "shop/web", Tag: "1.0", LayerSizes: []int64{32 << 10}, Seed: 5}
	st := testenv.StartStack(t, labsvc.StackConfig{Image: image,
		Addrs: labsvc.StackAddrs{DNS: "127.0.46.53", Registry: "127.0.46.10", Token: "127.0.46.11", Blob: "127.0.46.12", Blob2: "127.0.46.13"}})
	pinned := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(pinned, []byte("127.0.0.1 localhost\n127.0.46.99 blob.lab.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	okAgent, _ := startAgent(t, labOptions(t, labNode{name: "node-ok", stack: st}))
	badAgent, _ := startAgent(t, labOptions(t, labNode{name: "node-pinned", stack: st, hosts: pinned}))
	prom := startPrometheusJobs(t, map[string][]string{
		"pullpath-monitor": {okAgent.Addr(), badAgent.Addr()},
		"pullpath-events":  {x.Addr()},
	}, "")

	// Samples for the windows: both agents walked, the exporter's counter
	// scraped a few times, then one more failure so that rates move.
	waitFor(t, 90*time.Second, "both agents' verdicts and the exporter's failures in Prometheus", func() (bool, string) {
		a, err := prom.query(`count(pullpath_probe_verdict_code == 1)`)
		if err != nil || len(a) != 1 || a[0].Value[1] != "2" {
			return false, "agents not walked yet"
		}
		e, err := prom.query(`count_over_time(pullpath_pull_failures_total[1m]) >= 3`)
		if err != nil || len(e) == 0 {
			return false, "exporter not scraped 3 times yet"
		}
		return true, ""
	})
	failure("web.2")
	waitFor(t, 60*time.Second, "the second failure's rate in Prometheus", func() (bool, string) {
		r, err := prom.query(`sum(increase(pullpath_pull_failures_total[1m])) > 0`)
		return err == nil && len(r) == 1, "no increase yet"
	})

	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			q := grafanaVars.Replace(tg.Expr)
			res, err := prom.query(q)
			if err != nil {
				t.Errorf("panel %q query %s: %v", p.Title, tg.RefID, err)
				continue
			}
			if len(res) == 0 {
				t.Errorf("panel %q query %s returns no series:\n  %s", p.Title, tg.RefID, q)
				continue
			}
			t.Logf("panel %q %s: %d series, first %v = %v", p.Title, tg.RefID, len(res), res[0].Metric, res[0].Value[1])
		}
	}
}
