package deploy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/pullpath/pullpath/internal/testenv/controlplane"
	"github.com/pullpath/pullpath/internal/testenv/deploytest"
)

// chartKinds are the resources the chart renders, to count by label.
var chartKinds = []schema.GroupVersionResource{
	{Version: "v1", Resource: "namespaces"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "services"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	{Group: "monitoring.coreos.com", Version: "v1", Resource: "podmonitors"},
	{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"},
	{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"},
}

// countByLabel counts the objects of the release (label
// app.kubernetes.io/instance) that are not being deleted, and those that
// are (a Namespace waits for its contents).
func countByLabel(ctx context.Context, t *testing.T, dyn dynamic.Interface, release string) (live, deleting []string) {
	t.Helper()
	for _, gvr := range chartKinds {
		l, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release})
		if apierrors.IsNotFound(err) && gvr.Group == "monitoring.coreos.com" {
			continue // no Prometheus operator CRDs (the lab cluster): none of these
		}
		if err != nil {
			t.Fatalf("list %s: %v", gvr.Resource, err)
		}
		for _, o := range l.Items {
			name := gvr.Resource + "/" + o.GetNamespace() + "/" + o.GetName()
			if o.GetDeletionTimestamp() != nil {
				deleting = append(deleting, name)
			} else {
				live = append(live, name)
			}
		}
	}
	return live, deleting
}

// TestHelmInstallOnAPIServer installs the chart with the real helm into a
// real kube-apiserver (minimal CRDs stand in for the Prometheus
// operator's), so the API server validates every object; the objects of
// the release, counted by label, are exactly the rendered ones; an upgrade
// applies cleanly; and after `helm uninstall` no object of the release is
// left but the Namespaces, which wait for the namespace controller (no
// kube-controller-manager runs here: the lab cluster's test sees them go).
func TestHelmInstallOnAPIServer(t *testing.T) {
	helmBin(t)
	cp := controlplane.Require(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, c := range deploytest.PrometheusOperatorCRDs() {
		if _, err := dyn.Resource(crdGVR).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatalf("CRD %s: %v", c.GetName(), err)
		}
	}
	// the CRDs served before helm maps the kinds
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for _, c := range deploytest.PrometheusOperatorCRDs() {
		gvr := schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: strings.SplitN(c.GetName(), ".", 2)[0]}
		deadline := time.Now().Add(60 * time.Second)
		for {
			_, err := dyn.Resource(gvr).Namespace("default").List(ctx, metav1.ListOptions{Limit: 1})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not served within 60s: %v", c.GetName(), err)
			}
			<-tick.C
		}
	}

	args := []string{"--kubeconfig", cp.Kubeconfig, "--namespace", "default", "--set", "metrics.serviceMonitor.enabled=true"}
	want := len(render(t, "--set", "metrics.serviceMonitor.enabled=true"))
	if out, errOut, err := helm(t, append([]string{"install", "pullpath", chart}, args...)...); err != nil {
		t.Fatalf("helm install: %v\n%s%s", err, out, errOut)
	}
	live, _ := countByLabel(ctx, t, dyn, "pullpath")
	if len(live) != want {
		t.Errorf("after helm install: %d objects labelled app.kubernetes.io/instance=pullpath, want the %d rendered:\n%s", len(live), want, strings.Join(live, "\n"))
	}
	if out, errOut, err := helm(t, append([]string{"upgrade", "pullpath", chart, "--set", "monitor.interval=10m"}, args...)...); err != nil {
		t.Fatalf("helm upgrade: %v\n%s%s", err, out, errOut)
	}
	cm, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("pullpath-monitor").Get(ctx, "pullpath-monitor", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if js, _, _ := unstructuredString(cm.Object, "data", "monitor.json"); !strings.Contains(js, `"interval": "10m"`) {
		t.Errorf("after helm upgrade --set monitor.interval=10m, monitor.json = %s", js)
	}
	if out, errOut, err := helm(t, "uninstall", "pullpath", "--kubeconfig", cp.Kubeconfig, "--namespace", "default"); err != nil {
		t.Fatalf("helm uninstall: %v\n%s%s", err, out, errOut)
	}
	live, deleting := countByLabel(ctx, t, dyn, "pullpath")
	for _, d := range deleting {
		if !strings.HasPrefix(d, "namespaces/") {
			live = append(live, d+" (deleting)")
		}
	}
	if len(live) != 0 {
		t.Errorf("after helm uninstall, objects of the release remain:\n%s", strings.Join(live, "\n"))
	}
	if len(deleting) != 2 {
		t.Errorf("after helm uninstall: namespaces terminating %v, want pullpath-monitor and pullpath-sweep", deleting)
	}
	// the release record is gone too
	sec, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace("default").List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=pullpath"})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if err == nil && len(sec.Items) != 0 {
		t.Errorf("helm's release record remains: %d secrets", len(sec.Items))
	}
}

func unstructuredString(obj map[string]any, path ...string) (string, bool, error) {
	cur := any(obj)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, fmt.Errorf("%s: not an object", p)
		}
		cur = m[p]
	}
	s, ok := cur.(string)
	return s, ok, nil
}
