package deploytest

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// PrometheusOperatorCRDs are minimal CustomResourceDefinitions for the
// Prometheus operator's kinds the chart renders (PodMonitor,
// ServiceMonitor, PrometheusRule), so that the manifests apply as they are
// to an API server without the operator.
func PrometheusOperatorCRDs() []*unstructured.Unstructured {
	return []*unstructured.Unstructured{crd("PodMonitor", "podmonitors"), crd("ServiceMonitor", "servicemonitors"), crd("PrometheusRule", "prometheusrules")}
}

// crd is a minimal CustomResourceDefinition for a Prometheus operator kind.
func crd(kind, plural string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	u.SetName(plural + ".monitoring.coreos.com")
	_ = unstructured.SetNestedField(u.Object, map[string]any{
		"group": "monitoring.coreos.com",
		"scope": "Namespaced",
		"names": map[string]any{"kind": kind, "plural": plural, "listKind": kind + "List", "singular": strings.ToLower(kind)},
		"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
	}, "spec")
	return u
}
