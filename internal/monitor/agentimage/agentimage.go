// Package agentimage builds the monitor agent's container image (the one
// deploy/monitor's DaemonSet runs) without Docker: a static pullpath-agent
// binary in one layer, with /etc/passwd and /etc/group naming the non-root
// user 65532 (selfimage.User, the same as pullpath's own image), no shell.
// Tarball and OCI layout writing are internal/selfimage's.
//
// Used by `go run ./hack/agent-image`, the benchmarks and the lab cluster
// test; the agent does not link it.
package agentimage

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/pullpath/pullpath/internal/selfimage"
)

// Ref is the reference deploy/monitor/daemonset.yaml names.
const Ref = "ghcr.io/pullpath/pullpath-agent:0.1.0"

// BuildBinary builds a static pullpath-agent for platform (linux/ARCH)
// from the module at moduleDir into dir.
func BuildBinary(ctx context.Context, moduleDir, dir, platform string) (string, error) {
	osName, arch, ok := strings.Cut(platform, "/")
	if !ok || osName != "linux" || (arch != "amd64" && arch != "arm64") {
		return "", fmt.Errorf("platform %q: want linux/amd64 or linux/arm64", platform)
	}
	out := filepath.Join(dir, "pullpath-agent-"+arch)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "./cmd/pullpath-agent")
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build pullpath-agent for %s: %v\n%s", platform, err, b)
	}
	return out, nil
}

// Image is one platform's agent image.
func Image(binary, platform string) (v1.Image, error) {
	osName, arch, _ := strings.Cut(platform, "/")
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("pullpath-agent binary: %v", err)
	}
	layerTar, err := rootfs(bin)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer: %v", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{
		OS: osName, Architecture: arch,
		Created: v1.Time{Time: time.Unix(0, 0).UTC()},
		RootFS:  v1.RootFS{Type: "layers"},
		Config: v1.Config{
			User:       selfimage.User,
			Entrypoint: []string{"/pullpath-agent"},
			WorkingDir: "/",
			Env:        []string{"PATH=/"},
			Labels: map[string]string{
				"org.opencontainers.image.title":  "pullpath-agent",
				"org.opencontainers.image.source": "https://github.com/pullpath/pullpath",
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("config: %v", err)
	}
	return mutate.AppendLayers(img, layer)
}

func rootfs(bin []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
		dir  bool
	}{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "pullpath-agent", mode: 0o755, data: bin},
	} {
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: epoch, Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

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
