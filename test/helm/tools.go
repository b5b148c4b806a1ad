//go:build tools

// Package tools pins the helm CLI that hack/controlplane.sh builds into
// test/controlplane/bin/helm: the chart's tests (deploy/helm/pullpath) run
// `helm lint`, `helm template`, `helm install` and `helm uninstall` with it.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
