// Package selfimage builds pullpath's own container images without Docker
// (the CLI's here; the node-side image the walk's Pods run is
// internal/monitor/agentimage's, packed the same way): from static
// binaries (CGO off, one per platform) with go-containerregistry, as an
// OCI image index for linux/amd64 and linux/arm64. Each image is one
// layer: the binary, and /etc/passwd and /etc/group naming the non-root
// user 65532 it runs as; no shell, no package manager. The index is
// written as an OCI layout, a single-platform tarball for `ctr images
// import` (the lab cluster's nodes), or pushed to a registry the user
// names.
//
// Used by `go run ./hack/image` and by tests; the pullpath binary does not
// link it.
package selfimage

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the uid:gid the image runs as.
const User = "65532:65532"

// DefaultPlatforms are the platforms of the published index.
var DefaultPlatforms = []string{"linux/amd64", "linux/arm64"}

// Program is one of pullpath's programs as an image: the package to build
// and the name of its binary, which is also the image's entrypoint.
type Program struct {
	Package string   // ./cmd/pullpath
	Name    string   // pullpath
	Cmd     []string // the default arguments
}

// Pullpath is the whole CLI, the image for kubectl debug.
var Pullpath = Program{Package: "./cmd/pullpath", Name: "pullpath", Cmd: []string{"--help"}}

// BuildBinary builds a static pullpath binary for platform (linux/ARCH)
// from the module at moduleDir into dir, and returns its path.
func BuildBinary(ctx context.Context, moduleDir, dir, platform string) (string, error) {
	return Pullpath.Build(ctx, moduleDir, dir, platform)
}

// Image is one platform's image from a pullpath binary.
func Image(binary, platform string) (v1.Image, error) { return Pullpath.Image(binary, platform) }

// Build builds the program, static, for platform (linux/ARCH) from the
// module at moduleDir into dir, and returns the binary's path.
func (p Program) Build(ctx context.Context, moduleDir, dir, platform string) (string, error) {
	osName, arch, ok := strings.Cut(platform, "/")
	if !ok || osName != "linux" || (arch != "amd64" && arch != "arm64") {
		return "", fmt.Errorf("platform %q: want linux/amd64 or linux/arm64", platform)
	}
	out := filepath.Join(dir, p.Name+"-"+arch)
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags", "-s -w", "-o", out, p.Package)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s for %s: %v\n%s", p.Name, platform, err, b)
	}
	return out, nil
}

// Image is one platform's image of the program's binary: one layer with
// /NAME and the non-root user, no shell.
func (p Program) Image(binary, platform string) (v1.Image, error) {
	osName, arch, _ := strings.Cut(platform, "/")
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("%s binary: %v", p.Name, err)
	}
	layerTar, err := rootfs(p.Name, bin)
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
			User:       User,
			Entrypoint: []string{"/" + p.Name},
			Cmd:        p.Cmd,
			WorkingDir: "/",
			Env:        []string{"PATH=/"},
			Labels: map[string]string{
				"org.opencontainers.image.title":  p.Name,
				"org.opencontainers.image.source": "https://github.com/pullpath/pullpath",
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("config: %v", err)
	}
	img, err = mutate.AppendLayers(img, layer)
	if err != nil {
		return nil, fmt.Errorf("append layer: %v", err)
	}
	return img, nil
}

// rootfs is the layer's tar: the binary and the user's entries, with fixed
// times so that the same binary gives the same digest.
func rootfs(name string, bin []byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	files := []struct {
		name string
		mode int64
		data []byte
		dir  bool
	}{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: name, mode: 0o755, data: bin},
	}
	for _, f := range files {
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

// Index puts one pullpath image per platform into an OCI index.
func Index(binaries map[string]string) (v1.ImageIndex, error) { return Pullpath.Index(binaries) }

// Index puts one image of the program per platform into an OCI index.
func (prog Program) Index(binaries map[string]string) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range sortedKeys(binaries) {
		img, err := prog.Image(binaries[p], p)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		osName, arch, _ := strings.Cut(p, "/")
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: osName, Architecture: arch}}})
	}
	return idx, nil
}

// WriteLayout writes the index to an OCI layout directory, tagged ref.
func WriteLayout(dir string, idx v1.ImageIndex, ref string) error {
	p, err := layout.FromPath(dir)
	if err != nil {
		if p, err = layout.Write(dir, empty.Index); err != nil {
			return fmt.Errorf("OCI layout %s: %v", dir, err)
		}
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
		return fmt.Errorf("OCI layout %s: %v", dir, err)
	}
	return nil
}

// WriteTarball writes one platform's image as a tarball tagged ref, the
// format `ctr images import` and `docker load` read.
func WriteTarball(path string, img v1.Image, ref string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("tag %q: %v", ref, err)
	}
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		return fmt.Errorf("tarball %s: %v", path, err)
	}
	return nil
}

// Push writes the index to ref with the default keychain (docker login,
// credential helpers).
func Push(ctx context.Context, idx v1.ImageIndex, ref string, opts ...name.Option) error {
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return fmt.Errorf("push %q: %v", ref, err)
	}
	if err := remote.WriteIndex(r, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("push %s: %v", ref, err)
	}
	return nil
}

// HostPlatform is linux/GOARCH of this machine.
func HostPlatform() string { return "linux/" + runtime.GOARCH }

// LabTarball builds pullpath's binary for this machine's platform from
// the module at moduleDir and writes the image as a tarball tagged ref into
// dir: what the lab cluster imports into every node's containerd. It
// returns the tarball's path.
func LabTarball(ctx context.Context, moduleDir, dir, ref string) (string, error) {
	out, _, err := Pullpath.LabTarball(ctx, moduleDir, dir, ref)
	return out, err
}

// LabTarball builds the program for this machine's platform from the
// module at moduleDir and writes its image as a tarball tagged ref into dir
// (for `ctr images import`). It returns the tarball's path and the image.
func (p Program) LabTarball(ctx context.Context, moduleDir, dir, ref string) (string, v1.Image, error) {
	bin, err := p.Build(ctx, moduleDir, dir, HostPlatform())
	if err != nil {
		return "", nil, err
	}
	img, err := p.Image(bin, HostPlatform())
	if err != nil {
		return "", nil, err
	}
	out := filepath.Join(dir, p.Name+"-image.tar")
	if err := WriteTarball(out, img, ref); err != nil {
		return "", nil, err
	}
	return out, img, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
