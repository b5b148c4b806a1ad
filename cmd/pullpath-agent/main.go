// Command pullpath-agent is `pullpath monitor` in a binary of its own, for
// the DaemonSet in deploy/monitor: it links the walk (internal/pull,
// netcheck, runtimecfg), the Prometheus client and a small Kubernetes REST
// client, and none of client-go, cobra, the lab or the cloud SDKs, so every
// node maps as little as it can.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pullpath/pullpath/internal/monitor"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := monitor.Main(ctx, "pullpath-agent", os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
