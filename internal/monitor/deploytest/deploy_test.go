package deploytest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/testenv/kwait"
)

func TestMain(m *testing.M) { labtest.Main(m) }

const deployDir = "../../../deploy/monitor"

// kustomizeResources reads the resources of kustomization.yaml, and checks
// that every manifest in the folder is one of them.
func kustomizeResources(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, r := range k.Resources {
		listed[r] = true
	}
	files, _ := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" && !listed[base] {
			t.Errorf("deploy/monitor/%s is not in kustomization.yaml", base)
		}
	}
	return k.Resources
}

// apply creates every object of the manifests, in kustomization order;
// edit, when set, may change each object and returns what to create in its
// place (the object, and objects to create right after it).
func apply(ctx context.Context, t *testing.T, cfg *rest.Config, files []string, edit func(*unstructured.Unstructured) []*unstructured.Unstructured) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	create := func(u *unstructured.Unstructured) error {
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return err
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if ns := u.GetNamespace(); ns != "" {
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		_, err = ri.Create(ctx, u, metav1.CreateOptions{})
		return err
	}
	for _, c := range PrometheusOperatorCRDs() {
		if err := create(c); err != nil {
			t.Fatalf("CRD %s: %v", c.GetName(), err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		mapper.Reset()
		_, err1 := mapper.RESTMapping(schemaGK("monitoring.coreos.com", "PodMonitor"), "v1")
		_, err2 := mapper.RESTMapping(schemaGK("monitoring.coreos.com", "PrometheusRule"), "v1")
		if err1 == nil && err2 == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the CRDs were not served within 30s: %v %v", err1, err2)
		}
		<-tick.C
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(deployDir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			js, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatalf("deploy/monitor/%s: %v", f, err)
			}
			if strings.TrimSpace(string(js)) == "null" {
				continue
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(js); err != nil {
				t.Fatalf("deploy/monitor/%s: %v", f, err)
			}
			objs := []*unstructured.Unstructured{u}
			if edit != nil {
				objs = edit(u)
			}
			for _, o := range objs {
				if err := create(o); err != nil {
					t.Fatalf("apply deploy/monitor/%s %s %s: %v", f, o.GetKind(), o.GetName(), err)
				}
			}
		}
	}
}

// TestDaemonSetRunsOnEveryLabNode applies deploy/monitor as it is
// (kustomization order; minimal CRDs stand in for the Prometheus operator)
// to a lab cluster with real kubelets, and waits for the agent to run on
// every node; then it scrapes one agent from inside the node's network.
func TestDaemonSetRunsOnEveryLabNode(t *testing.T) {
	c := labtest.Require(t, "cluster-healthy")
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	labtest.ImportAgentImage(ctx, t, c)
	apply(ctx, t, c.Config, kustomizeResources(t), nil)

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
