package throughput

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/bench/measure"
	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/testenv"
)

func TestSummarize(t *testing.T) {
	r := &Result{SHA256Before: 500, SHA256After: 400, Runs: []Run{
		{Tool: ToolPullpath, MBps: 300, ToolMBps: 310, PeakRSSMiB: 20},
		{Tool: ToolPeer, MBps: 200, ToolMBps: 210, PeakRSSMiB: 10},
		{Tool: ToolPullpath, MBps: 100, ToolMBps: 110, PeakRSSMiB: 30},
		{Tool: ToolPeer, MBps: 250, ToolMBps: 260, PeakRSSMiB: 12},
		{Tool: ToolPullpath, MBps: 250, ToolMBps: 260, PeakRSSMiB: 25},
		{Tool: ToolPeer, MBps: 300, ToolMBps: 310, PeakRSSMiB: 11},
	}}
	r.summarize()
	checks := []struct {
		name      string
		got, want float64
	}{
		{"pullpath median", r.PullpathMBps, 250},
		{"peer median", r.PeerMBps, 250},
		{"ratio", r.Ratio, 1},
		{"of sha256 (the higher of before/after)", r.OfSHA256, 0.5},
		{"pullpath max RSS", r.PullpathRSS, 30},
		{"peer max RSS", r.PeerRSS, 12},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("summarize: %s = %v, want %v", c.name, c.got, c.want)
		}
	}
	md := r.Markdown()
	if n := strings.Count(md, "| "+ToolPullpath+" |"); n != 3 {
		t.Errorf("Markdown() has %d pullpath rows, want 3:\n%s", n, md)
	}
}

func buildPeer(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ggcrpull")
	cmd := exec.Command("go", "build", "-o", out, "../cmd/ggcrpull")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ggcrpull: %v\n%s", err, msg)
	}
	return out
}

func layerDigest(seed int64, li int, size int64) string {
	h := sha256.New()
	io.Copy(h, labsvc.LayerReader(seed, 0, li, size))
	return fmt.Sprintf("sha256:%x", h.Sum(nil))
}

// TestPeerPullsAndVerifies runs the ggcr peer against the real registry
// stack: it must pull every byte through the blob redirect host, and fail
// when the blob host serves a corrupted layer.
func TestPeerPullsAndVerifies(t *testing.T) {
	if _, err := os.Stat(measure.TimeBinary); err != nil {
		testenv.Unavailable(t, fmt.Sprintf("%s missing: %v", measure.TimeBinary, err))
	}
	peer := buildPeer(t)
	sizes := []int64{300 << 10, 200 << 10}
	spec := labsvc.ImageSpec{Repository: "bench/big", Tag: "v1", LayerSizes: sizes, Seed: 42}
	tests := []struct {
		name    string
		faults  labsvc.BlobFaults
		wantErr string
	}{
		{name: "healthy pull through the blob host"},
		{name: "corrupted layer fails verification", faults: labsvc.BlobFaults{CorruptDigest: layerDigest(42, 1, sizes[1])}, wantErr: "did not pull the whole image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			st, err := labsvc.StartStack(ctx, labsvc.StackConfig{Dir: t.TempDir(), Image: spec, BlobFaults: tt.faults})
			if err != nil {
				t.Fatalf("StartStack: %v", err)
			}
			defer st.Close()
			var want int64
			for _, b := range st.Image.Blobs() {
				want += b.Size
			}
			run, err := runPeer(ctx, Config{PeerBin: peer, Concurrency: 3, RunTimeout: 30 * time.Second}, st, 1, want)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("runPeer error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("runPeer error: %v", err)
			}
			if run.Bytes != want {
				t.Errorf("runPeer bytes = %d, want %d", run.Bytes, want)
			}
			if st.Blob == nil || len(st.Blob.Requests()) == 0 {
				t.Errorf("the blob host saw no request: the peer did not follow the redirect")
			}
		})
	}
}
