package selfimage

import (
	"archive/tar"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// fakeBinaries stands in for the static binaries (building pullpath for two
// platforms belongs to hack/image and the lab test): the image's shape is
// what is under test here.
func fakeBinaries(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{}
	for _, p := range DefaultPlatforms {
		f := filepath.Join(dir, strings.ReplaceAll(p, "/", "-"))
		if err := os.WriteFile(f, []byte("\x7fELF fake pullpath for "+p), 0o755); err != nil {
			t.Fatal(err)
		}
		out[p] = f
	}
	return out
}

func TestIndexShape(t *testing.T) {
	idx, err := Index(fakeBinaries(t))
	if err != nil {
		t.Fatal(err)
	}
	checkIndex(t, idx)
}

func checkIndex(t *testing.T, idx v1.ImageIndex) {
	t.Helper()
	mt, _ := idx.MediaType()
	if mt != types.OCIImageIndex {
		t.Errorf("index media type = %s, want %s", mt, types.OCIImageIndex)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var plats []string
	for _, d := range im.Manifests {
		plats = append(plats, d.Platform.OS+"/"+d.Platform.Architecture)
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Config.User != User || cf.OS+"/"+cf.Architecture != d.Platform.OS+"/"+d.Platform.Architecture || len(cf.Config.Entrypoint) != 1 || cf.Config.Entrypoint[0] != "/pullpath" {
			t.Errorf("%s config = user %q platform %s/%s entrypoint %v, want %s, the descriptor's platform and /pullpath", d.Digest, cf.Config.User, cf.OS, cf.Architecture, cf.Config.Entrypoint, User)
		}
		checkFiles(t, img)
	}
	if strings.Join(plats, ",") != "linux/amd64,linux/arm64" {
		t.Errorf("platforms = %v, want linux/amd64 and linux/arm64", plats)
	}
}

func checkFiles(t *testing.T, img v1.Image) {
	t.Helper()
	files := layerFiles(t, img)
	if files["pullpath"] != 0o755 || files["etc/passwd"] == 0 {
		t.Errorf("layer files = %v, want pullpath 0755 and etc/passwd", files)
	}
	for f := range files {
		if strings.HasPrefix(f, "bin/") || strings.HasSuffix(f, "/sh") {
			t.Errorf("layer has %s: want no shell", f)
		}
	}
}

func layerFiles(t *testing.T, img v1.Image) map[string]int64 {
	t.Helper()
	ls, err := img.Layers()
	if err != nil || len(ls) != 1 {
		t.Fatalf("layers = %d (%v), want 1", len(ls), err)
	}
	rc, err := ls[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string]int64{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = h.Mode
	}
}

func TestWriteLayoutTarballAndPush(t *testing.T) {
	bins := fakeBinaries(t)
	idx, err := Index(bins)
	if err != nil {
		t.Fatal(err)
	}
	// OCI layout, read back.
	dir := t.TempDir()
	if err := WriteLayout(dir, idx, "ghcr.io/pullpath/pullpath:test"); err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	root, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	rm, _ := root.IndexManifest()
	if len(rm.Manifests) != 1 || rm.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "ghcr.io/pullpath/pullpath:test" {
		t.Fatalf("layout index = %+v, want one tagged index", rm.Manifests)
	}
	inner, err := root.ImageIndex(rm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	checkIndex(t, inner)

	// Tarball (what ctr images import reads), read back.
	img, err := Image(bins["linux/amd64"], "linux/amd64")
	if err != nil {
		t.Fatal(err)
	}
	tarPath := filepath.Join(t.TempDir(), "img.tar")
	if err := WriteTarball(tarPath, img, "registry.lab.test/tools/pullpath:lab"); err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("registry.lab.test/tools/pullpath:lab")
	back, err := tarball.ImageFromPath(tarPath, &tag)
	if err != nil {
		t.Fatalf("tarball.ImageFromPath = %v", err)
	}
	// The tarball holds the same config and layer (its manifest is
	// rewritten in the tarball's own format).
	c1, _ := img.ConfigName()
	c2, _ := back.ConfigName()
	if c1 != c2 {
		t.Errorf("tarball image config %s, want %s", c2, c1)
	}
	checkFiles(t, back)

	// Push to a registry (go-containerregistry's in-memory one), pull back.
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/tools/pullpath:test"
	if err := Push(context.Background(), idx, ref, name.Insecure); err != nil {
		t.Fatal(err)
	}
	r, _ := name.ParseReference(ref, name.Insecure)
	got, err := remote.Index(r)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	if gd, _ := got.Digest(); gd != want {
		t.Errorf("pushed index digest %s, want %s", gd, want)
	}
}

func TestBadPlatform(t *testing.T) {
	if _, err := BuildBinary(context.Background(), ".", t.TempDir(), "windows/amd64"); err == nil || !strings.Contains(err.Error(), "want linux/amd64 or linux/arm64") {
		t.Errorf("BuildBinary(windows/amd64) = %v, want a one-line refusal", err)
	}
}
