package labsvc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestWriteImageDeterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spec := ImageSpec{Repository: "lab/app", Tag: "v1", LayerSizes: []int64{1000, 70000}, Seed: 7}
	a, err := WriteImage(ctx, t.TempDir(), spec)
	if err != nil {
		t.Fatalf("WriteImage: %v", err)
	}
	b, err := WriteImage(ctx, t.TempDir(), spec)
	if err != nil {
		t.Fatalf("WriteImage: %v", err)
	}
	if a.Top != b.Top {
		t.Errorf("WriteImage twice: top %v then %v, want the same", a.Top, b.Top)
	}
	if a.Top.MediaType != MediaTypeManifest {
		t.Errorf("single-platform top media type = %q, want %q", a.Top.MediaType, MediaTypeManifest)
	}
	spec.Seed = 8
	c, err := WriteImage(ctx, t.TempDir(), spec)
	if err != nil {
		t.Fatalf("WriteImage: %v", err)
	}
	if c.Platforms[0].Layers[0].Digest == a.Platforms[0].Layers[0].Digest {
		t.Errorf("seeds 7 and 8 gave the same layer digest %s", a.Platforms[0].Layers[0].Digest)
	}
	// The layers are what LayerReader gives, independently hashed.
	for li, l := range a.Platforms[0].Layers {
		h := sha256.New()
		n, err := io.Copy(h, LayerReader(7, 0, li, spec.LayerSizes[li]))
		if err != nil {
			t.Fatalf("LayerReader: %v", err)
		}
		if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != l.Digest || n != l.Size {
			t.Errorf("layer %d: LayerReader gives %s (%d bytes), WriteImage stored %s (%d bytes)", li, got, n, l.Digest, l.Size)
		}
		if l.Size < spec.LayerSizes[li] {
			t.Errorf("layer %d size %d, want at least the payload %d", li, l.Size, spec.LayerSizes[li])
		}
	}
}

func TestWriteImageIndex(t *testing.T) {
	t.Parallel()
	img, err := WriteImage(context.Background(), t.TempDir(), ImageSpec{Repository: "lab/multi", Tag: "v2", Platforms: []string{"linux/amd64", "linux/arm64/v8"}, LayerSizes: []int64{100}})
	if err != nil {
		t.Fatalf("WriteImage: %v", err)
	}
	if img.Top.MediaType != MediaTypeIndex {
		t.Errorf("two-platform top media type = %q, want %q", img.Top.MediaType, MediaTypeIndex)
	}
	if len(img.Platforms) != 2 || img.Platforms[1].Platform != "linux/arm64/v8" {
		t.Fatalf("platforms = %+v, want linux/amd64 and linux/arm64/v8", img.Platforms)
	}
	if img.Platforms[0].Layers[0].Digest == img.Platforms[1].Layers[0].Digest {
		t.Errorf("both platforms share layer %s, want distinct layers", img.Platforms[0].Layers[0].Digest)
	}
}

func TestWriteImageRejectsBadSpec(t *testing.T) {
	t.Parallel()
	tests := map[string]ImageSpec{
		"invalid-no-repository": {Tag: "v1"},
		"invalid-repository":    {Repository: "Lab/App"},
		"invalid-tag":           {Repository: "lab/app", Tag: "-bad"},
		"invalid-platform":      {Repository: "lab/app", Platforms: []string{"linux"}},
		"invalid-dup-platform":  {Repository: "lab/app", Platforms: []string{"linux/amd64", "linux/amd64"}},
		"invalid-layer-size":    {Repository: "lab/app", LayerSizes: []int64{-1}},
	}
	for name, spec := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := WriteImage(context.Background(), t.TempDir(), spec); err == nil {
				t.Errorf("WriteImage(%+v) = nil error, want an error", spec)
			}
		})
	}
}

// TestWriteImageStreams writes a 64 MiB image and checks the heap never
// holds a sizeable part of it. Not parallel: it measures the heap.
func TestWriteImageStreams(t *testing.T) {
	const size = 64 << 20
	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	img, err := WriteImage(context.Background(), t.TempDir(), ImageSpec{Repository: "lab/big", Tag: "v1", LayerSizes: []int64{size}, Seed: 3})
	close(stop)
	<-done
	if err != nil {
		t.Fatalf("WriteImage: %v", err)
	}
	if got := img.TotalLayerBytes(); got < size {
		t.Fatalf("layer bytes = %d, want at least %d", got, size)
	}
	t.Logf("64 MiB image in %v, peak HeapInuse %d MiB", time.Since(start).Round(time.Millisecond), peak.Load()>>20)
	if p := peak.Load(); p > size/4 {
		t.Errorf("peak HeapInuse %d bytes while writing a %d-byte layer, want under %d", p, size, size/4)
	}
}

func BenchmarkWriteImage16MiB(b *testing.B) {
	const size = 16 << 20
	b.SetBytes(size)
	for i := 0; i < b.N; i++ {
		if _, err := WriteImage(context.Background(), b.TempDir(), ImageSpec{Repository: "lab/bench", LayerSizes: []int64{size}, Seed: int64(i)}); err != nil {
			b.Fatalf("WriteImage: %v", err)
		}
	}
}
