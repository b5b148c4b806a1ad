package deploytest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// ApplyMonitor creates every object of deploy/monitor on the cluster of
// cfg, in kustomization order, after PrometheusOperatorCRDs (served before
// the first object, within 30 s). edit, when set, may change each object
// and returns what to create in its place (the object, and objects to
// create right after it).
func ApplyMonitor(ctx context.Context, cfg *rest.Config, edit func(*unstructured.Unstructured) []*unstructured.Unstructured) error {
	dir, err := deployDir("monitor")
	if err != nil {
		return err
	}
	files, err := kustomizeResources(dir)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
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
			return fmt.Errorf("CRD %s: %v", c.GetName(), err)
		}
	}
	if err := crdsMapped(ctx, mapper, 30*time.Second); err != nil {
		return err
	}
	for _, f := range files {
		objs, err := manifestObjects(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		for _, u := range objs {
			created := []*unstructured.Unstructured{u}
			if edit != nil {
				created = edit(u)
			}
			for _, o := range created {
				if err := create(o); err != nil {
					return fmt.Errorf("apply deploy/monitor/%s %s %s: %v", f, o.GetKind(), o.GetName(), err)
				}
			}
		}
	}
	return nil
}

// kustomizeResources reads the resources of dir's kustomization.yaml, and
// checks that every manifest in dir is one of them.
func kustomizeResources(dir string) ([]string, error) {
	kf := filepath.Join(dir, "kustomization.yaml")
	b, err := os.ReadFile(kf)
	if err != nil {
		return nil, err
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("%s: %v", kf, err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var unlisted []string
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" && !slices.Contains(k.Resources, base) {
			unlisted = append(unlisted, base)
		}
	}
	if len(unlisted) > 0 {
		return nil, fmt.Errorf("%s: %s not in its resources, want every manifest of %s listed", kf, strings.Join(unlisted, ", "), dir)
	}
	return k.Resources, nil
}

// manifestObjects reads the objects of a multi-document manifest (empty
// documents left out).
func manifestObjects(file string) ([]*unstructured.Unstructured, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(string(b), "\n---\n") {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		if strings.TrimSpace(string(js)) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// crdsMapped waits, bounded by timeout, until mapper maps the Prometheus
// operator's kinds the manifests use (discovery serves a CRD a moment
// after it is created).
func crdsMapped(ctx context.Context, mapper *restmapper.DeferredDiscoveryRESTMapper, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		mapper.Reset()
		_, err1 := mapper.RESTMapping(schema.GroupKind{Group: "monitoring.coreos.com", Kind: "PodMonitor"}, "v1")
		_, err2 := mapper.RESTMapping(schema.GroupKind{Group: "monitoring.coreos.com", Kind: "PrometheusRule"}, "v1")
		if err1 == nil && err2 == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the CRDs were not served within %s: %v %v", timeout, err1, err2)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the CRDs were not served: %v (%v %v)", ctx.Err(), err1, err2)
		case <-tick.C:
		}
	}
}
