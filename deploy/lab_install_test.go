package deploy

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/selfimage"
	"github.com/pullpath/pullpath/internal/testenv/kwait"
)

// TestMain lets the test binary stand in for pullpath: the lab re-executes
// os.Executable() inside its namespaces.
func TestMain(m *testing.M) { labtest.Main(m) }

// TestHelmInstallOnLabCluster is issue 26's "done when" on real kubelets:
// `helm install` of the chart (the Prometheus operator's objects off: the
// lab has no operator) on a lab cluster whose nodes run kube-proxy brings
// up an agent Ready on every node and the events exporter (which reads the
// API through kubernetes.default's ClusterIP) Available; `helm uninstall`
// leaves nothing labelled with the release, the Namespaces included (the
// lab's kube-controller-manager removes them).
func TestHelmInstallOnLabCluster(t *testing.T) {
	helmBin(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// The CLI's image first, on its own clock (a cold build is minutes).
	bctx, bcancel := context.WithTimeout(t.Context(), labtest.BuildTimeout)
	cli, _, err := selfimage.Pullpath.LabTarball(bctx, root, t.TempDir(), "ghcr.io/pullpath/pullpath:v0.1.0")
	bcancel()
	if err != nil {
		t.Fatal(err)
	}
	c := labtest.Require(t, "cluster-healthy")
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	labtest.ImportAgentImage(ctx, t, c)
	if err := c.ImportImage(ctx, cli); err != nil {
		t.Fatal(err)
	}
	off := []string{"--set", "metrics.podMonitor.enabled=false", "--set", "metrics.prometheusRule.enabled=false"}
	want := len(render(t, off...))
	args := append([]string{"--kubeconfig", c.Kubeconfig, "--namespace", "default"}, off...)
	start := time.Now()
	if out, errOut, err := helm(t, append([]string{"install", "pullpath", chart}, args...)...); err != nil {
		t.Fatalf("helm install: %v\n%s%s", err, out, errOut)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	if live, _ := countByLabel(ctx, t, dyn, "pullpath"); len(live) != want {
		t.Errorf("after helm install: %d objects labelled app.kubernetes.io/instance=pullpath, want the %d rendered:\n%s", len(live), want, strings.Join(live, "\n"))
	}
	nodes := len(c.NodeNames())
	end, _ := ctx.Deadline()
	kwait.One(ctx, t, time.Until(end), "DaemonSet pullpath-monitor ready on every node",
		kwait.DaemonSet(c.Client, "pullpath-monitor", "pullpath-monitor"),
		func(ds *appsv1.DaemonSet) bool { return int(ds.Status.NumberReady) == nodes })
	kwait.Until(ctx, t, time.Until(end), "the events exporter's Pod running and ready",
		kwait.Pods(c.Client, "pullpath-monitor", "app.kubernetes.io/name=pullpath-events"),
		func(ps []*corev1.Pod) bool {
			for _, p := range ps {
				for _, cs := range p.Status.ContainerStatuses {
					if cs.Ready && cs.State.Running != nil {
						return true
					}
				}
			}
			return false
		})
	t.Logf("helm install to every agent and the exporter ready: %s", time.Since(start).Round(time.Millisecond))

	if out, errOut, err := helm(t, "uninstall", "pullpath", "--kubeconfig", c.Kubeconfig, "--namespace", "default"); err != nil {
		t.Fatalf("helm uninstall: %v\n%s%s", err, out, errOut)
	}
	// the Namespaces go last, once the namespace controller emptied them
	sel := func(o metav1.ListOptions) metav1.ListOptions {
		o.LabelSelector = "app.kubernetes.io/instance=pullpath"
		return o
	}
	kwait.Until(ctx, t, time.Until(end), "no Namespace of the release left", &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return c.Client.CoreV1().Namespaces().List(ctx, sel(o))
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.Client.CoreV1().Namespaces().Watch(ctx, sel(o))
		},
	}, func(ns []*corev1.Namespace) bool { return len(ns) == 0 })
	if live, deleting := countByLabel(ctx, t, dyn, "pullpath"); len(live)+len(deleting) != 0 {
		t.Errorf("after helm uninstall, objects of the release remain:\n%s", strings.Join(append(live, deleting...), "\n"))
	}
	t.Logf("helm install to uninstall and nothing left: %s", time.Since(start).Round(time.Millisecond))
}
