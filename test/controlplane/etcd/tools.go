//go:build tools

// Package tools pins the etcd server that hack/controlplane.sh builds into
// test/controlplane/bin/etcd.
package tools

import _ "go.etcd.io/etcd/server/v3"
