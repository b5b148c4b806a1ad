// Command image builds pullpath's container images without Docker: static
// binaries for each platform, one OCI index (internal/selfimage), written
// as an OCI layout, a single-platform tarball, or pushed to a registry.
// Two images: pullpath-agent, the small node-side image every Pod of the
// walk runs (sweep's and diagnose's probes, deploy/monitor's DaemonSet),
// and pullpath, the whole CLI (for kubectl debug).
//
//	go run ./hack/image --program pullpath-agent --push registry.example.com/tools/pullpath-agent:v0.1.0
//	go run ./hack/image --program pullpath-agent --tarball out/agent.tar --platforms linux/amd64 --tag ghcr.io/pullpath/pullpath-agent:lab
//	go run ./hack/image --oci-layout out/pullpath-oci --tag ghcr.io/pullpath/pullpath:v0.1.0
//	go run ./hack/image --push registry.example.com/tools/pullpath:v0.1.0
//
// Mirror the published node-side image into a private registry with crane:
//
//	crane copy ghcr.io/pullpath/pullpath-agent:v0.1.0 registry.internal/tools/pullpath-agent:v0.1.0
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/pullpath/pullpath/internal/monitor/agentimage"
	"github.com/pullpath/pullpath/internal/selfimage"
)

func main() {
	var (
		platforms = flag.String("platforms", strings.Join(selfimage.DefaultPlatforms, ","), "comma-separated platforms (linux/amd64, linux/arm64)")
		layoutDir = flag.String("oci-layout", "", "write the index to this OCI layout directory")
		tarPath   = flag.String("tarball", "", "write a single-platform image tarball here (for ctr images import); needs exactly one --platforms")
		push      = flag.String("push", "", "push the index to this reference")
		tag       = flag.String("tag", "", "the reference named in the layout or tarball (default ghcr.io/pullpath/pullpath:latest, or "+agentimage.Ref+" for the agent)")
		module    = flag.String("module", ".", "the pullpath module to build from")
		program   = flag.String("program", "pullpath", "which image: pullpath-agent (the node-side image: sweep's and diagnose's probe Pods, deploy/monitor's DaemonSet) or pullpath (the whole CLI, for kubectl debug)")
	)
	flag.Parse()
	prog, defTag := selfimage.Pullpath, "ghcr.io/pullpath/pullpath:latest"
	switch *program {
	case "pullpath":
	case "pullpath-agent":
		prog, defTag = agentimage.Program, agentimage.Ref
	default:
		fmt.Fprintf(os.Stderr, "hack/image: --program %q: want pullpath or pullpath-agent\n", *program)
		os.Exit(1)
	}
	if *tag == "" {
		*tag = defTag
	}
	if err := run(prog, *platforms, *layoutDir, *tarPath, *push, *tag, *module); err != nil {
		fmt.Fprintf(os.Stderr, "hack/image: %v\n", err)
		os.Exit(1)
	}
}

func run(prog selfimage.Program, platforms, layoutDir, tarPath, push, tag, module string) error {
	if layoutDir == "" && tarPath == "" && push == "" {
		return fmt.Errorf("nothing to write: want --oci-layout DIR, --tarball FILE or --push REF")
	}
	ps := strings.Split(platforms, ",")
	if tarPath != "" && len(ps) != 1 {
		return fmt.Errorf("--tarball holds one platform: want --platforms with exactly one (have %q)", platforms)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir, err := os.MkdirTemp("", "pullpath-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bins := map[string]string{}
	for _, p := range ps {
		b, err := prog.Build(ctx, module, dir, strings.TrimSpace(p))
		if err != nil {
			return err
		}
		bins[strings.TrimSpace(p)] = b
	}
	if tarPath != "" {
		img, err := prog.Image(bins[strings.TrimSpace(ps[0])], strings.TrimSpace(ps[0]))
		if err != nil {
			return err
		}
		if err := selfimage.WriteTarball(tarPath, img, tag); err != nil {
			return err
		}
		fmt.Printf("wrote %s (%s, %s)\n", tarPath, ps[0], tag)
	}
	if layoutDir == "" && push == "" {
		return nil
	}
	idx, err := prog.Index(bins)
	if err != nil {
		return err
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	if layoutDir != "" {
		if err := selfimage.WriteLayout(layoutDir, idx, tag); err != nil {
			return err
		}
		fmt.Printf("wrote OCI layout %s (%s, index %s)\n", layoutDir, tag, d)
	}
	if push != "" {
		if err := selfimage.Push(ctx, idx, push); err != nil {
			return err
		}
		fmt.Printf("pushed %s@%s\n", push, d)
	}
	return nil
}
