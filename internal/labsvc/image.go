package labsvc

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/distribution/distribution/v3"
	"github.com/distribution/distribution/v3/manifest/ocischema"
	"github.com/distribution/distribution/v3/registry/storage"
	"github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	"github.com/distribution/reference"
	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	v1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// Media types of what WriteImage generates.
const (
	MediaTypeLayer    = v1.MediaTypeImageLayer // uncompressed tar
	MediaTypeConfig   = v1.MediaTypeImageConfig
	MediaTypeManifest = v1.MediaTypeImageManifest
	MediaTypeIndex    = v1.MediaTypeImageIndex
)

// ImageSpec describes a deterministic image: the same spec always gives the
// same digests. Each layer is an uncompressed tar holding one file of
// LayerSizes[i] pseudo-random (incompressible) bytes drawn from Seed.
// More than one platform makes an OCI index over one manifest per platform.
type ImageSpec struct {
	Repository string   `json:"repository"` // e.g. "lab/app"
	Tag        string   `json:"tag"`        // e.g. "v1"
	Platforms  []string `json:"platforms"`  // "os/arch[/variant]"; empty means linux/amd64
	LayerSizes []int64  `json:"layerSizes"` // payload bytes per layer; empty means one 1 KiB layer
	Seed       int64    `json:"seed"`
	// BaseLayer, when set, is an uncompressed tar stored as the first
	// layer of every platform (the lab's clusters put a static binary
	// there so that the image runs), and Cmd the image's command (default
	// /bin/true).
	BaseLayer []byte   `json:"baseLayer,omitempty"`
	Cmd       []string `json:"cmd,omitempty"`
}

// Descriptor names one stored blob or manifest.
type Descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"` // "sha256:HEX"
	Size      int64  `json:"size"`
}

// PlatformImage is the manifest of one platform with its config and layers.
type PlatformImage struct {
	Platform string       `json:"platform"`
	Manifest Descriptor   `json:"manifest"`
	Config   Descriptor   `json:"config"`
	Layers   []Descriptor `json:"layers"`
}

// Image is what WriteImage stored. Top is what the tag points at: the
// index when there are several platforms, else the single manifest.
type Image struct {
	Repository string          `json:"repository"`
	Tag        string          `json:"tag"`
	Top        Descriptor      `json:"top"`
	Platforms  []PlatformImage `json:"platforms"`
}

// Blobs returns every layer and config descriptor of the image.
func (im *Image) Blobs() []Descriptor {
	var out []Descriptor
	for _, p := range im.Platforms {
		out = append(out, p.Config)
		out = append(out, p.Layers...)
	}
	return out
}

// TotalLayerBytes sums the sizes of all layers.
func (im *Image) TotalLayerBytes() int64 {
	var n int64
	for _, p := range im.Platforms {
		for _, l := range p.Layers {
			n += l.Size
		}
	}
	return n
}

// normalized returns the spec with defaults applied, or an error naming
// the bad field.
func (s ImageSpec) normalized() (ImageSpec, error) {
	if s.Repository == "" {
		return s, fmt.Errorf("image spec: repository is empty, want a name like %q", "lab/app")
	}
	if _, err := reference.WithName(s.Repository); err != nil {
		return s, fmt.Errorf("image spec: repository %q is not a valid repository name: %v", s.Repository, err)
	}
	if s.Tag == "" {
		s.Tag = "latest"
	}
	if _, err := reference.WithTag(mustName(s.Repository), s.Tag); err != nil {
		return s, fmt.Errorf("image spec: tag %q is not a valid tag: %v", s.Tag, err)
	}
	if len(s.Platforms) == 0 {
		s.Platforms = []string{"linux/amd64"}
	}
	seen := map[string]bool{}
	for _, p := range s.Platforms {
		if _, err := parsePlatform(p); err != nil {
			return s, err
		}
		if seen[p] {
			return s, fmt.Errorf("image spec: platform %q listed twice", p)
		}
		seen[p] = true
	}
	if len(s.LayerSizes) == 0 {
		s.LayerSizes = []int64{1024}
	}
	for i, n := range s.LayerSizes {
		if n < 0 || n >= 8<<30 {
			return s, fmt.Errorf("image spec: layer %d size %d out of range, want 0..8GiB", i, n)
		}
	}
	return s, nil
}

func mustName(repo string) reference.Named {
	n, _ := reference.WithName(repo)
	return n
}

func parsePlatform(p string) (v1.Platform, error) {
	parts := strings.Split(p, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return v1.Platform{}, fmt.Errorf("image spec: platform %q, want os/arch or os/arch/variant", p)
	}
	pl := v1.Platform{OS: parts[0], Architecture: parts[1]}
	if len(parts) == 3 {
		pl.Variant = parts[2]
	}
	return pl, nil
}

// WriteImage generates the image of spec and stores it, tagged, in the
// distribution filesystem storage rooted at storageRoot (the registry's
// rootdirectory), through distribution's own storage API. Layers are
// generated and written as a stream: memory use does not grow with size.
func WriteImage(ctx context.Context, storageRoot string, spec ImageSpec) (*Image, error) {
	spec, err := spec.normalized()
	if err != nil {
		return nil, err
	}
	if storageRoot == "" {
		return nil, fmt.Errorf("write image %s:%s: storage root is empty", spec.Repository, spec.Tag)
	}
	driver := filesystem.New(filesystem.DriverParameters{RootDirectory: storageRoot, MaxThreads: 100})
	ns, err := storage.NewRegistry(ctx, driver, storage.EnableRedirect)
	if err != nil {
		return nil, fmt.Errorf("open registry storage %q: %w", storageRoot, err)
	}
	repo, err := ns.Repository(ctx, mustName(spec.Repository))
	if err != nil {
		return nil, fmt.Errorf("open repository %q: %w", spec.Repository, err)
	}
	ms, err := repo.Manifests(ctx)
	if err != nil {
		return nil, fmt.Errorf("open manifests of %q: %w", spec.Repository, err)
	}
	img := &Image{Repository: spec.Repository, Tag: spec.Tag}
	var indexDescs []v1.Descriptor
	for pi, p := range spec.Platforms {
		plat, _ := parsePlatform(p)
		pimg := PlatformImage{Platform: p}
		var diffIDs []digest.Digest
		var layerDescs []v1.Descriptor
		if spec.BaseLayer != nil {
			bd, err := repo.Blobs(ctx).Put(ctx, MediaTypeLayer, spec.BaseLayer)
			if err != nil {
				return nil, fmt.Errorf("write base layer of %s %s: %w", spec.Repository, p, err)
			}
			d := Descriptor{MediaType: MediaTypeLayer, Digest: bd.Digest.String(), Size: bd.Size}
			pimg.Layers = append(pimg.Layers, d)
			diffIDs = append(diffIDs, bd.Digest)
			layerDescs = append(layerDescs, v1.Descriptor{MediaType: d.MediaType, Digest: bd.Digest, Size: bd.Size})
		}
		for li, size := range spec.LayerSizes {
			d, err := writeLayer(ctx, repo.Blobs(ctx), spec.Seed, pi, li, size)
			if err != nil {
				return nil, fmt.Errorf("write layer %d of %s %s: %w", li, spec.Repository, p, err)
			}
			pimg.Layers = append(pimg.Layers, d)
			diffIDs = append(diffIDs, digest.Digest(d.Digest))
			layerDescs = append(layerDescs, v1.Descriptor{MediaType: d.MediaType, Digest: digest.Digest(d.Digest), Size: d.Size})
		}
		cfg := v1.Image{
			Created:  ptrTime(time.Unix(0, 0).UTC()),
			Platform: plat,
			Config:   v1.ImageConfig{Cmd: cmdOr(spec.Cmd), Labels: map[string]string{"lab.pullpath.seed": fmt.Sprint(spec.Seed)}},
			RootFS:   v1.RootFS{Type: "layers", DiffIDs: diffIDs},
		}
		cfgBytes, err := json.Marshal(cfg)
		if err != nil {
			return nil, fmt.Errorf("marshal config: %w", err)
		}
		cd, err := repo.Blobs(ctx).Put(ctx, MediaTypeConfig, cfgBytes)
		if err != nil {
			return nil, fmt.Errorf("store config of %s: %w", p, err)
		}
		pimg.Config = Descriptor{MediaType: MediaTypeConfig, Digest: cd.Digest.String(), Size: cd.Size}
		m := ocischema.Manifest{
			Versioned: specs.Versioned{SchemaVersion: 2},
			MediaType: MediaTypeManifest,
			Config:    v1.Descriptor{MediaType: MediaTypeConfig, Digest: cd.Digest, Size: cd.Size},
			Layers:    layerDescs,
		}
		dm, err := ocischema.FromStruct(m)
		if err != nil {
			return nil, fmt.Errorf("build manifest of %s: %w", p, err)
		}
		md, err := ms.Put(ctx, dm)
		if err != nil {
			return nil, fmt.Errorf("store manifest of %s: %w", p, err)
		}
		_, payload, _ := dm.Payload()
		pimg.Manifest = Descriptor{MediaType: MediaTypeManifest, Digest: md.String(), Size: int64(len(payload))}
		img.Platforms = append(img.Platforms, pimg)
		pl := plat
		indexDescs = append(indexDescs, v1.Descriptor{MediaType: MediaTypeManifest, Digest: md, Size: int64(len(payload)), Platform: &pl})
	}
	if len(spec.Platforms) == 1 {
		img.Top = img.Platforms[0].Manifest
		return img, tagImage(ctx, repo, spec.Tag, img.Top)
	}
	idx, err := ocischema.FromDescriptors(indexDescs, nil)
	if err != nil {
		return nil, fmt.Errorf("build index: %w", err)
	}
	id, err := ms.Put(ctx, idx)
	if err != nil {
		return nil, fmt.Errorf("store index: %w", err)
	}
	_, payload, _ := idx.Payload()
	img.Top = Descriptor{MediaType: MediaTypeIndex, Digest: id.String(), Size: int64(len(payload))}
	return img, tagImage(ctx, repo, spec.Tag, img.Top)
}

func tagImage(ctx context.Context, repo distribution.Repository, tag string, d Descriptor) error {
	err := repo.Tags(ctx).Tag(ctx, tag, v1.Descriptor{MediaType: d.MediaType, Digest: digest.Digest(d.Digest), Size: d.Size})
	if err != nil {
		return fmt.Errorf("tag %s: %w", tag, err)
	}
	return nil
}

func ptrTime(t time.Time) *time.Time { return &t }

func cmdOr(cmd []string) []string {
	if len(cmd) == 0 {
		return []string{"/bin/true"}
	}
	return cmd
}

// LayerReader returns the uncompressed tar of layer li of platform pi of an
// image with the given seed, as a stream. WriteImage stores exactly these
// bytes; tests may use it to recompute digests independently.
func LayerReader(seed int64, pi, li int, size int64) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(writeLayerTar(pw, seed, pi, li, size))
	}()
	return pr
}

func writeLayerTar(w io.Writer, seed int64, pi, li int, size int64) error {
	tw := tar.NewWriter(w)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     fmt.Sprintf("lab/layer-%d-%d.bin", pi, li),
		Size:     size,
		Mode:     0o644,
		ModTime:  time.Unix(0, 0),
		Format:   tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if _, err := io.CopyBuffer(tw, io.LimitReader(randomSource(seed, pi, li), size), make([]byte, 256<<10)); err != nil {
		return err
	}
	return tw.Close()
}

// randomSource is a deterministic ChaCha8 stream for one layer.
func randomSource(seed int64, pi, li int) io.Reader {
	var key [32]byte
	h := sha256.New()
	var b [24]byte
	binary.BigEndian.PutUint64(b[0:], uint64(seed))
	binary.BigEndian.PutUint64(b[8:], uint64(pi))
	binary.BigEndian.PutUint64(b[16:], uint64(li))
	h.Write([]byte("pullpath-lab-layer"))
	h.Write(b[:])
	copy(key[:], h.Sum(nil))
	return rand.NewChaCha8(key)
}

// countingHash tees writes into a sha256 and counts bytes.
type countingHash struct {
	h hash.Hash
	n int64
}

func (c *countingHash) Write(p []byte) (int, error) {
	c.h.Write(p)
	c.n += int64(len(p))
	return len(p), nil
}

func writeLayer(ctx context.Context, bs distribution.BlobStore, seed int64, pi, li int, size int64) (Descriptor, error) {
	bw, err := bs.Create(ctx)
	if err != nil {
		return Descriptor{}, err
	}
	ch := &countingHash{h: sha256.New()}
	if err := writeLayerTar(io.MultiWriter(bw, ch), seed, pi, li, size); err != nil {
		_ = bw.Cancel(ctx)
		return Descriptor{}, err
	}
	dg := digest.NewDigestFromBytes(digest.SHA256, ch.h.Sum(nil))
	desc, err := bw.Commit(ctx, v1.Descriptor{MediaType: MediaTypeLayer, Digest: dg, Size: ch.n})
	if err != nil {
		return Descriptor{}, err
	}
	return Descriptor{MediaType: MediaTypeLayer, Digest: desc.Digest.String(), Size: desc.Size}, nil
}
