// Command pullpath tells why a Kubernetes node cannot pull an image, from the
// node's own network namespace. See `pullpath --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pullpath/pullpath/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args, cli.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	stop()
	os.Exit(code)
}
