// Package agentimage builds the monitor agent's container image (the one
// deploy/monitor's DaemonSet runs) without Docker: a static pullpath-agent
// binary in one layer, with /etc/passwd and /etc/group naming the non-root
// user 65532 (selfimage.User, the same as pullpath's own image), no shell.
// Building and packing are internal/selfimage's (selfimage.Program).
//
// Used by `go run ./hack/image --program pullpath-agent`, the benchmarks and the lab cluster
// test; the agent does not link it.
package agentimage

import (
	"context"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pullpath/pullpath/internal/selfimage"
)

// Ref is the reference deploy/monitor/daemonset.yaml names.
const Ref = "ghcr.io/pullpath/pullpath-agent:0.1.0"

// Program is the node agent, built and packed as selfimage packs pullpath.
var Program = selfimage.Program{Package: "./cmd/pullpath-agent", Name: "pullpath-agent"}

// BuildBinary builds a static pullpath-agent for platform (linux/ARCH)
// from the module at moduleDir into dir.
func BuildBinary(ctx context.Context, moduleDir, dir, platform string) (string, error) {
	return Program.Build(ctx, moduleDir, dir, platform)
}

// Image is one platform's agent image.
func Image(binary, platform string) (v1.Image, error) { return Program.Image(binary, platform) }

// Size is what a node downloads for the image: the compressed layers, the
// config and the manifest, in bytes.
func Size(img v1.Image) (int64, error) {
	var n int64
	ls, err := img.Layers()
	if err != nil {
		return 0, err
	}
	for _, l := range ls {
		s, err := l.Size()
		if err != nil {
			return 0, err
		}
		n += s
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return 0, err
	}
	m, err := img.RawManifest()
	if err != nil {
		return 0, err
	}
	return n + int64(len(cfg)) + int64(len(m)), nil
}

// LabTarball builds the image for this machine and writes it as a tarball
// tagged Ref into dir (for the lab cluster's `ctr images import`).
func LabTarball(ctx context.Context, moduleDir, dir string) (string, v1.Image, error) {
	bin, err := BuildBinary(ctx, moduleDir, dir, selfimage.HostPlatform())
	if err != nil {
		return "", nil, err
	}
	img, err := Image(bin, selfimage.HostPlatform())
	if err != nil {
		return "", nil, err
	}
	out := filepath.Join(dir, "pullpath-agent-image.tar")
	if err := selfimage.WriteTarball(out, img, Ref); err != nil {
		return "", nil, err
	}
	return out, img, nil
}
