// Command agent-image builds the monitor agent's container image without
// Docker (internal/monitor/agentimage): one OCI index for linux/amd64 and
// linux/arm64 as an OCI layout or pushed, or one platform as a tarball for
// `ctr images import`. It prints each image's download size.
//
//	go run ./hack/agent-image --oci-layout out/agent-oci
//	go run ./hack/agent-image --tarball out/agent.tar --platforms linux/amd64
//	go run ./hack/agent-image --push registry.example.com/tools/pullpath-agent:0.1.0
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/pullpath/pullpath/internal/monitor/agentimage"
	"github.com/pullpath/pullpath/internal/selfimage"
)

func main() {
	var (
		platforms = flag.String("platforms", strings.Join(selfimage.DefaultPlatforms, ","), "comma-separated platforms (linux/amd64, linux/arm64)")
		layoutDir = flag.String("oci-layout", "", "write the index to this OCI layout directory")
		tarPath   = flag.String("tarball", "", "write a single-platform image tarball here; needs exactly one --platforms")
		push      = flag.String("push", "", "push the index to this reference")
		tag       = flag.String("tag", agentimage.Ref, "the reference named in the layout or tarball")
		module    = flag.String("module", ".", "the pullpath module to build from")
	)
	flag.Parse()
	if err := run(*platforms, *layoutDir, *tarPath, *push, *tag, *module); err != nil {
		fmt.Fprintf(os.Stderr, "hack/agent-image: %v\n", err)
		os.Exit(1)
	}
}

func run(platforms, layoutDir, tarPath, push, tag, module string) error {
	if layoutDir == "" && tarPath == "" && push == "" {
		return fmt.Errorf("nothing to write: want --oci-layout DIR, --tarball FILE or --push REF")
	}
	ps := strings.Split(platforms, ",")
	if tarPath != "" && len(ps) != 1 {
		return fmt.Errorf("--tarball holds one platform: want --platforms with exactly one (have %q)", platforms)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir, err := os.MkdirTemp("", "pullpath-agent-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var last v1.Image
	for _, p := range ps {
		p = strings.TrimSpace(p)
		bin, err := agentimage.BuildBinary(ctx, module, dir, p)
		if err != nil {
			return err
		}
		img, err := agentimage.Image(bin, p)
		if err != nil {
			return err
		}
		size, err := agentimage.Size(img)
		if err != nil {
			return err
		}
		fmt.Printf("%s: %.1f MB to download\n", p, float64(size)/1e6)
		osName, arch, _ := strings.Cut(p, "/")
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: osName, Architecture: arch}}})
		last = img
	}
	if tarPath != "" {
		if err := selfimage.WriteTarball(tarPath, last, tag); err != nil {
			return err
		}
	}
	if layoutDir != "" {
		if err := selfimage.WriteLayout(layoutDir, idx, tag); err != nil {
			return err
		}
	}
	if push != "" {
		return selfimage.Push(ctx, idx, push)
	}
	return nil
}
