// Package agentimage builds pullpath's node-side image, the one
// deploy/monitor's DaemonSet and the Pods of sweep's and diagnose's walk
// run, without Docker: a static pullpath-agent binary in one layer, with
// /etc/passwd and /etc/group naming the non-root user 65532
// (selfimage.User, the same as pullpath's own image), no shell. Building
// and packing are internal/selfimage's (selfimage.Program).
//
// Used by `go run ./hack/image --program pullpath-agent`, the benchmarks
// and the lab cluster tests; the agent does not link it.
package agentimage

import (
	"context"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pullpath/pullpath/internal/selfimage"
)

// Ref is the reference deploy/monitor/daemonset.yaml names.
const Ref = "ghcr.io/pullpath/pullpath-agent:v0.1.0"

// Program is the node-side binary (the agent, probe, version), built and
// packed as selfimage packs pullpath.
var Program = selfimage.Program{Package: "./cmd/pullpath-agent", Name: "pullpath-agent", Cmd: []string{"--help"}}

// BuildBinary builds a static pullpath-agent for platform (linux/ARCH)
// from the module at moduleDir into dir.
func BuildBinary(ctx context.Context, moduleDir, dir, platform string) (string, error) {
	return Program.Build(ctx, moduleDir, dir, platform)
}

// Image is one platform's agent image.
func Image(binary, platform string) (v1.Image, error) { return Program.Image(binary, platform) }

// Size is what a node downloads for the image (selfimage.Size).
func Size(img v1.Image) (int64, error) { return selfimage.Size(img) }

// LabTarball builds the image for this machine and writes it as a tarball
// tagged Ref into dir (for the lab cluster's `ctr images import`).
func LabTarball(ctx context.Context, moduleDir, dir string) (string, v1.Image, error) {
	return Program.LabTarball(ctx, moduleDir, dir, Ref)
}
