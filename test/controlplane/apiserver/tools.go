//go:build tools

// Package tools pins the Kubernetes components that hack/controlplane.sh
// builds into test/controlplane/bin/: kube-apiserver for the cluster tests
// of explain, and kube-controller-manager, kube-scheduler, kubelet and
// kube-proxy for the lab's clusters (internal/lab/cluster). One module for
// all five, so they share one dependency graph and one build cache.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
