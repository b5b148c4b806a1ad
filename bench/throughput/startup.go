package throughput

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/pullpath/pullpath/bench/measure"
)

// Binary is one program whose start-up is measured: `NAME version`.
type Binary struct {
	Name string // the row's name, e.g. "pullpath-agent (the node's binary)"
	Path string
}

// Startup is one binary's `version`, Rounds times.
type Startup struct {
	Name        string  `json:"name"`
	SizeMB      float64 `json:"sizeMB"`
	Runs        int     `json:"runs"`
	MedianMS    float64 `json:"medianMs"` // wall of the process, median
	MinMS       float64 `json:"minMs"`
	PeakRSSMiB  float64 `json:"peakRssMiB"`  // GNU time %M, median
	PeakFileMiB float64 `json:"peakFileMiB"` // sampled RssFile, max (often 0: the process ends first)
	CPUMS       float64 `json:"cpuMs"`       // user+sys, median
}

// MeasureStartup runs `version` of every binary rounds times, interleaved,
// each under GNU time: what a command pays before it does anything.
func MeasureStartup(ctx context.Context, bins []Binary, rounds int) ([]Startup, error) {
	walls := make([][]float64, len(bins))
	rss := make([][]float64, len(bins))
	cpu := make([][]float64, len(bins))
	out := make([]Startup, len(bins))
	for r := 0; r < rounds; r++ {
		for i, b := range bins {
			res, err := measure.Run(ctx, measure.Cmd{Argv: []string{b.Path, "version"}, Timeout: time.Minute})
			if err != nil {
				return nil, fmt.Errorf("startup: %s version: %w", b.Name, err)
			}
			if res.ExitCode != 0 || !strings.HasPrefix(string(res.Stdout), "pullpath") {
				return nil, fmt.Errorf("startup: %s version = exit %d, %q", b.Name, res.ExitCode, res.Stdout)
			}
			walls[i] = append(walls[i], float64(res.Wall.Microseconds())/1000)
			rss[i] = append(rss[i], res.PeakRSSMiB())
			cpu[i] = append(cpu[i], res.CPUSec()*1000)
			out[i].PeakFileMiB = max(out[i].PeakFileMiB, kib(res.PeakFileKB))
		}
	}
	for i, b := range bins {
		size, err := fileSize(b.Path)
		if err != nil {
			return nil, err
		}
		out[i].Name, out[i].Runs, out[i].SizeMB = b.Name, rounds, float64(size)/1e6
		out[i].MedianMS, out[i].PeakRSSMiB, out[i].CPUMS = measure.Median(walls[i]), measure.Median(rss[i]), measure.Median(cpu[i])
		out[i].MinMS = walls[i][0]
		for _, w := range walls[i] {
			out[i].MinMS = min(out[i].MinMS, w)
		}
	}
	return out, nil
}

// StartupMarkdown renders MeasureStartup's table.
func StartupMarkdown(ss []Startup) string {
	var b strings.Builder
	b.WriteString("| binary | size MB | `version`: median wall ms (min) | CPU ms | peak RSS MiB |\n|---|---|---|---|---|\n")
	for _, s := range ss {
		fmt.Fprintf(&b, "| %s | %.1f | %.1f (%.1f) | %.0f | %.1f |\n", s.Name, s.SizeMB, s.MedianMS, s.MinMS, s.CPUMS, s.PeakRSSMiB)
	}
	return b.String()
}

func fileSize(p string) (int64, error) {
	st, err := os.Stat(p)
	if err != nil {
		return 0, fmt.Errorf("startup: %v", err)
	}
	return st.Size(), nil
}
