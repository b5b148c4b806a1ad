// Command sweepbench times `pullpath sweep`'s control side over 5,000
// simulated nodes in 300 groups on the real kube-apiserver (see
// bench/sweepscale and BENCHMARKS.md):
//
//	bash hack/controlplane.sh && go build -o /tmp/pullpath ./cmd/pullpath
//	go run ./bench/cmd/sweepbench --pullpath /tmp/pullpath [--nodes 5000] [--modes default,all]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/pullpath/pullpath/bench/sweepscale"
)

func main() {
	bin := flag.String("pullpath", "", "the pullpath binary to time")
	nodes := flag.Int("nodes", sweepscale.DefaultShape.Nodes, "nodes to load")
	modes := flag.String("modes", "default,all", "runs: default (one node per group), all (--all)")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "sweepbench: --pullpath BINARY is required")
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 45*time.Minute)
	defer cancel()
	shape := sweepscale.DefaultShape
	shape.Nodes = *nodes
	res, err := sweepscale.Measure(ctx, sweepscale.Config{PullpathBin: *bin, Shape: shape, Log: os.Stderr, Modes: strings.Split(*modes, ",")})
	if res != nil {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Println(string(b))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "sweepbench: %v\n", err)
		os.Exit(1)
	}
}
