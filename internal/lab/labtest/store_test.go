package labtest

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/testenv"
)

// TestStoreImage: an image stored into a running registry's storage is
// served by that registry at once, byte for byte (ggcr's remote pulls it
// and verifies every digest), and keeps its digest.
func TestStoreImage(t *testing.T) {
	st := testenv.StartStack(t, labsvc.StackConfig{Addrs: labsvc.StackAddrs{DNS: "127.0.6.53", Registry: "127.0.6.10", Token: "127.0.6.11", Blob: "127.0.6.12", Blob2: "127.0.6.13"}})
	img, err := random.Image(64<<10, 3)
	if err != nil {
		t.Fatal(err)
	}
	want, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	repo := st.Image.Repository
	if got := StoreImage(t, st.Files.StorageDir, repo, "stored", img); got != want.String() {
		t.Fatalf("StoreImage = %s, want the image's own digest %s", got, want)
	}
	ref, err := name.ParseReference(st.RegistryHost + "/" + repo + ":stored")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	got, err := remote.Image(ref, remote.WithTransport(st.Transport()), remote.WithContext(ctx),
		remote.WithAuth(&authn.Basic{Username: st.Username, Password: st.Password}), remote.WithRetryBackoff(remote.Backoff{Steps: 1}))
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	if d, _ := got.Digest(); d != want {
		t.Errorf("the registry serves %s as %s, want %s", ref, d, want)
	}
	layers, err := got.Layers()
	if err != nil || len(layers) != 3 {
		t.Fatalf("layers = %d, %v; want 3", len(layers), err)
	}
	for _, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, rc); err != nil { // ggcr checks the digest at EOF
			t.Errorf("layer: %v", err)
		}
		rc.Close()
	}
}
