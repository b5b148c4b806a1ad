//go:build !fuzzonly

package pull

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/verdict"
)

// TestProbePace: the full walk times each blob host, projects the whole
// pull and holds it against --pull-budget (a warning) and the longest
// stretch without a byte against the node's progress timeout (the
// runtime's abort, a failure).
func TestProbePace(t *testing.T) {
	spec := labsvc.ImageSpec{Repository: "lab/app", Tag: "v1", LayerSizes: []int64{1 << 20, 512 << 10}, Seed: 9}

	t.Run("a pull over its budget warns with its projected time", func(t *testing.T) {
		rep, _ := probeStack(t, labsvc.StackConfig{Image: spec}, func(o *Options, _ *labsvc.Stack) { o.PullBudget = time.Millisecond })
		if rep.Verdict.Code != verdict.OK || !hasWarning(rep, verdict.PullSlow) {
			t.Fatalf("verdict %s, warnings %+v; want OK with PULL_SLOW", rep.Verdict.Code, rep.Warnings)
		}
		tp := rep.Transfer.Pace
		if tp == nil || tp.ProjectedMS <= 0 || tp.ImageBytes != rep.Transfer.Bytes || len(tp.Hosts) != 1 || tp.Hosts[0].Host != labsvc.BlobHostName || tp.Hosts[0].Bytes != rep.Transfer.Bytes || tp.Hosts[0].MBps <= 0 {
			t.Fatalf("pace %+v, want the blob host's rate and a projection of the whole image", tp)
		}
		for _, w := range rep.Warnings {
			if w.Code == verdict.PullSlow && (!strings.Contains(w.Message, "over --pull-budget 1ms") || !strings.Contains(w.Message, labsvc.BlobHostName+" ") || w.Endpoint != labsvc.BlobHostName) {
				t.Errorf("warning %+v, want the projected time over the budget and the blob host's rate", w)
			}
		}
	})

	t.Run("a stretch without a byte past the progress timeout is the runtime's abort", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(cfg, []byte("version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  image_pull_progress_timeout = \"1s\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		rep, _ := probeStack(t, labsvc.StackConfig{Image: spec, BlobFaults: labsvc.BlobFaults{Pause: "*", PauseMS: 1500}}, func(o *Options, _ *labsvc.Stack) {
			o.ContainerdConfig = cfg
			o.StallTimeout = 5 * time.Second
		})
		v := rep.Verdict
		if v.Code != verdict.PullProgressTimeout || v.Role != verdict.RoleBlob || v.Endpoint != labsvc.BlobHostName {
			t.Fatalf("verdict %s %s %s (%s), want PULL_PROGRESS_TIMEOUT on the blob host", v.Code, v.Role, v.Endpoint, v.Summary)
		}
		if !strings.Contains(v.Summary, "cancels a pull after 1s without a byte") || !strings.Contains(v.Summary, "every byte arrived in the end") {
			t.Errorf("summary %q does not hold the stretch against the progress timeout", v.Summary)
		}
		if tp := rep.Transfer.Pace; tp.MaxGapMS < 1400 || tp.ProgressTimeoutMS != 1000 {
			t.Errorf("pace %+v, want a stretch of about 1.5 s against 1 s", tp)
		}
	})

	t.Run("without the node's config the progress timeout is unknown: no abort", func(t *testing.T) {
		rep, _ := probeStack(t, labsvc.StackConfig{Image: spec, BlobFaults: labsvc.BlobFaults{Pause: "*", PauseMS: 1500}}, func(o *Options, _ *labsvc.Stack) {
			o.StallTimeout = 5 * time.Second
		})
		if rep.Verdict.Code != verdict.OK {
			t.Fatalf("verdict %s (%s), want OK: no config, no known progress timeout", rep.Verdict.Code, rep.Verdict.Summary)
		}
		if tp := rep.Transfer.Pace; tp.MaxGapMS < 1400 || tp.ProgressTimeoutMS != 0 || !strings.Contains(tp.ProgressNote, "unknown") {
			t.Errorf("pace %+v, want the stretch recorded and the timeout unknown", tp)
		}
	})

	t.Run("quick records the rate, projects nothing", func(t *testing.T) {
		rep, _ := probeStack(t, labsvc.StackConfig{Image: spec}, func(o *Options, _ *labsvc.Stack) { o.Quick = true; o.PullBudget = time.Millisecond })
		tp := rep.Transfer.Pace
		if tp == nil || tp.ProjectedMS != 0 || len(tp.Hosts) == 0 || hasWarning(rep, verdict.PullSlow) {
			t.Errorf("quick pace %+v, warnings %+v; want the rate seen and no projection", tp, rep.Warnings)
		}
	})
}
