package throughput

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/pull"
	"github.com/pullpath/pullpath/internal/verdict"
)

// BenchmarkProbeFullPull runs pull.Probe in-process over the real stack,
// for CPU profiles of the full verified pull (the server runs in the same
// process: focus the profile on internal/pull and crypto):
//
//	PULLBENCH_MIB=512 go test -run '^$' -bench ProbeFullPull -benchtime 3x \
//	  -cpuprofile /tmp/probe.cpu ./bench/throughput/
//	go tool pprof -top -focus 'pull\.' /tmp/probe.cpu
func BenchmarkProbeFullPull(b *testing.B) {
	mib := int64(256)
	if v := os.Getenv("PULLBENCH_MIB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > 4096 {
			b.Fatalf("PULLBENCH_MIB=%q: want a size in MiB from 1 to 4096", v)
		}
		mib = n
	}
	// Four layers, like a real image: the first twice the others.
	unit := (mib << 20) / 5
	sizes := []int64{2 * unit, unit, unit, unit}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st, err := labsvc.StartStack(ctx, labsvc.StackConfig{Dir: b.TempDir(), Image: labsvc.ImageSpec{Repository: "bench/big", Tag: "v1", LayerSizes: sizes, Seed: 42}})
	if err != nil {
		b.Fatalf("StartStack: %v", err)
	}
	defer st.Close()
	var total int64
	for _, d := range st.Image.Blobs() {
		total += d.Size
	}
	opts := pull.Options{
		Image: st.Ref(), Platform: "linux/amd64", Node: "bench-node",
		CertsDir: st.Files.CertsDir, DockerConfig: st.Files.DockerConfig,
		Net: netcheck.Config{HostsFile: st.Files.Hosts, Nameservers: []string{st.Nameserver()}},
	}
	b.SetBytes(total)
	b.ResetTimer()
	for range b.N {
		rep, err := pull.Probe(ctx, opts)
		if err != nil {
			b.Fatalf("Probe: %v", err)
		}
		if rep.Verdict.Code != verdict.OK || rep.Transfer == nil || !rep.Transfer.Verified {
			b.Fatalf("Probe verdict %s: %s", rep.Verdict.Code, rep.Verdict.Summary)
		}
	}
}
