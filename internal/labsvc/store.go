package labsvc

import (
	"context"
	"fmt"
	"io"

	"github.com/distribution/distribution/v3"
	"github.com/distribution/distribution/v3/registry/storage"
	"github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	"github.com/distribution/reference"
	"github.com/opencontainers/go-digest"
	v1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// Blob is one blob of an image to store: its descriptor and a way to read
// its bytes (a layer as the registry serves it, compressed or not).
type Blob struct {
	Descriptor
	Open func() (io.ReadCloser, error)
}

// StoreImage stores an image that exists elsewhere (one of pullpath's own,
// built by internal/selfimage) in the distribution filesystem storage
// rooted at storageRoot, tagged repository:tag, through distribution's own
// storage API: a registry serving that root, a running lab's included,
// serves it from the next request on. manifest is the image manifest's
// bytes as they are to be served (digest unchanged); blobs are its config
// and layers. It returns the manifest's descriptor.
func StoreImage(ctx context.Context, storageRoot, repository, tag, manifestType string, manifest []byte, blobs []Blob) (Descriptor, error) {
	fail := func(err error) (Descriptor, error) {
		return Descriptor{}, fmt.Errorf("store image %s:%s: %w", repository, tag, err)
	}
	if storageRoot == "" {
		return fail(fmt.Errorf("storage root is empty"))
	}
	named, err := reference.WithName(repository)
	if err != nil {
		return fail(err)
	}
	driver := filesystem.New(filesystem.DriverParameters{RootDirectory: storageRoot, MaxThreads: 100})
	ns, err := storage.NewRegistry(ctx, driver, storage.EnableRedirect)
	if err != nil {
		return fail(err)
	}
	repo, err := ns.Repository(ctx, named)
	if err != nil {
		return fail(err)
	}
	for _, b := range blobs {
		if err := storeBlob(ctx, repo.Blobs(ctx), b); err != nil {
			return fail(fmt.Errorf("blob %s: %w", b.Digest, err))
		}
	}
	m, _, err := distribution.UnmarshalManifest(manifestType, manifest)
	if err != nil {
		return fail(fmt.Errorf("manifest: %w", err))
	}
	ms, err := repo.Manifests(ctx)
	if err != nil {
		return fail(err)
	}
	md, err := ms.Put(ctx, m)
	if err != nil {
		return fail(fmt.Errorf("manifest: %w", err))
	}
	d := Descriptor{MediaType: manifestType, Digest: md.String(), Size: int64(len(manifest))}
	return d, tagImage(ctx, repo, tag, d)
}

// storeBlob streams one blob into the store; the store checks its digest
// and size on commit.
func storeBlob(ctx context.Context, bs distribution.BlobStore, b Blob) error {
	rc, err := b.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	bw, err := bs.Create(ctx)
	if err != nil {
		return err
	}
	if _, err := io.Copy(bw, rc); err != nil {
		_ = bw.Cancel(ctx)
		return err
	}
	_, err = bw.Commit(ctx, v1.Descriptor{MediaType: b.MediaType, Digest: digest.Digest(b.Digest), Size: b.Size})
	return err
}
