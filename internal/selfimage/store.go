package selfimage

import (
	"bytes"
	"context"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/pullpath/pullpath/internal/labsvc"
)

// StoreInLab stores img, tagged repository:tag, in the registry storage at
// storageRoot (a lab run's RunDir/storage, a labsvc.Stack's StorageDir), so
// that the lab's registry serves it and a node pulls it through the lab's
// network. It returns the manifest's digest.
func StoreInLab(ctx context.Context, storageRoot, repository, tag string, img v1.Image) (string, error) {
	raw, err := img.RawManifest()
	if err != nil {
		return "", err
	}
	mt, err := img.MediaType()
	if err != nil {
		return "", err
	}
	cfg, err := img.RawConfigFile()
	if err != nil {
		return "", err
	}
	m, err := img.Manifest()
	if err != nil {
		return "", err
	}
	blobs := []labsvc.Blob{{Descriptor: labsvc.Descriptor{MediaType: string(m.Config.MediaType), Digest: m.Config.Digest.String(), Size: m.Config.Size},
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(cfg)), nil }}}
	layers, err := img.Layers()
	if err != nil {
		return "", err
	}
	for i, l := range layers {
		d := m.Layers[i]
		blobs = append(blobs, labsvc.Blob{Descriptor: labsvc.Descriptor{MediaType: string(d.MediaType), Digest: d.Digest.String(), Size: d.Size}, Open: l.Compressed})
	}
	d, err := labsvc.StoreImage(ctx, storageRoot, repository, tag, string(mt), raw, blobs)
	if err != nil {
		return "", err
	}
	return d.Digest, nil
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
