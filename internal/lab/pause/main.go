// Command pause is the lab clusters' pause image and workload binary: it
// waits until it gets SIGTERM or SIGINT and exits 0. hack/controlplane.sh
// builds it static (CGO_ENABLED=0) into test/controlplane/bin/pause; the lab
// packs it into the sandbox image (registry.k8s.io/pause:3.10) that it
// imports into every node's containerd, and into the first layer of the
// registry's image so that a Deployment of it runs.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
