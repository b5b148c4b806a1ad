//go:build tools

// Package tools pins the kube-apiserver that hack/controlplane.sh builds into
// test/controlplane/bin/kube-apiserver.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
