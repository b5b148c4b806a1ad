// Command pullpath-agent is pullpath's node-side binary, the one small
// image every Pod of the walk runs: `pullpath monitor` for the DaemonSet in
// deploy/monitor (the default), `probe` for sweep's and diagnose's probe
// Pods (the same flags as `pullpath probe`, the report as JSON) and
// `version`. It links the walk (internal/pull, netcheck, runtimecfg), the
// Prometheus client and a small Kubernetes REST client, and none of
// client-go, cobra, the lab or the cloud SDKs (internal/depguard), so every
// node pulls and maps as little as it can.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pullpath/pullpath/internal/nodecli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := nodecli.Run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
