package cluster

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// pauseLayer is an uncompressed tar holding the pause binary as /pause.
func pauseLayer(pauseBin string) ([]byte, error) {
	b, err := os.ReadFile(pauseBin)
	if err != nil {
		return nil, fmt.Errorf("pause binary: %v (build it with `bash hack/controlplane.sh`)", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "pause", Size: int64(len(b)), Mode: 0o755,
		ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(b); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeSandboxImage builds the sandbox image (SandboxImage: the pause
// binary, entrypoint /pause, os and architecture set in its config) with
// go-containerregistry and writes it as a tarball `ctr images import`
// reads.
func writeSandboxImage(pauseBin, out string) (string, error) {
	layerTar, err := pauseLayer(pauseBin)
	if err != nil {
		return "", err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return "", err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return "", err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config.Entrypoint = []string{"/pause"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return "", err
	}
	ref, err := name.NewTag(SandboxImage)
	if err != nil {
		return "", err
	}
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return "", fmt.Errorf("write sandbox image %s: %v", out, err)
	}
	return out, nil
}
