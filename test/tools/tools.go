//go:build tools

// Package tools pins the programs hack/controlplane.sh builds into
// test/controlplane/bin/: etcd and kube-apiserver for the cluster tests
// (internal/testenv/controlplane), kube-controller-manager, kube-scheduler,
// kubelet and kube-proxy for the lab's clusters (internal/lab/cluster),
// helm for the chart's tests, crictl, the kubelet's way of asking
// containerd for a pull (internal/crirun), and containerd 2, the lab's
// layout nodes' runtime for version 3 configs (internal/lab/labhook).
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "go.etcd.io/etcd/server/v3"
	_ "helm.sh/helm/v4/cmd/helm"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "sigs.k8s.io/cri-tools/cmd/crictl"
)
