// Command gcpbench measures `pullpath gcp audit` (BENCHMARKS.md, section
// "gcp audit"): a GKE cluster of 300 node subnets (one pool and two nodes
// each), 500 firewall rules, 200 routes and 2,000 records in the pkg.dev
// zone (internal/audit/gcp/synth), written as the offline folder and
// audited by the real binary under GNU time (wall, peak RSS) for several
// rounds; and the live mode's API calls, counted by the loopback REST
// server (internal/audit/gcp/gcpfake, pages of 500) for clusters that
// differ in subnets, rules, routes and records, to show what the calls
// grow with.
//
//	go build -o /tmp/pullpath ./cmd/pullpath
//	go run ./bench/cmd/gcpbench -pullpath /tmp/pullpath [-rounds 5]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/pullpath/pullpath/bench/measure"
	"github.com/pullpath/pullpath/internal/audit"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/audit/gcp/gcpfake"
	"github.com/pullpath/pullpath/internal/audit/gcp/synth"
)

const (
	fixture = "internal/audit/gcp/testdata/valid-healthy"
	image   = "us-central1-docker.pkg.dev/shop-prod/apps/web:1.4.2"
)

var benchSize = synth.Size{Subnets: 300, Rules: 500, Routes: 200, Records: 2000}

func main() {
	bin := flag.String("pullpath", "", "the pullpath binary to measure (required)")
	rounds := flag.Int("rounds", 5, "rounds of the offline audit")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "gcpbench: want -pullpath BINARY (go build -o /tmp/pullpath ./cmd/pullpath)")
		os.Exit(1)
	}
	if err := run(*bin, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "gcpbench:", err)
		os.Exit(1)
	}
}

func run(bin string, rounds int) error {
	ctx := context.Background()
	mc := measure.DescribeMachine()
	fmt.Printf("machine: %s, %d cores, %d MiB, %s, load %s\n\n", mc.CPUModel, mc.Cores, mc.MemMiB, mc.Go, mc.LoadAvg)
	m, err := synth.Cluster(os.DirFS(fixture), benchSize)
	if err != nil {
		return fmt.Errorf("%v (run from the repository's root)", err)
	}
	// the last subnet loses Private Google Access: one failing subnet (exit 3)
	for _, k := range sortedKeys(m.Subnets) {
		if strings.HasSuffix(k, fmt.Sprintf("nodes-%03d", benchSize.Subnets-1)) {
			m.Subnets[k].PrivateIpGoogleAccess = false
		}
	}
	files, err := m.Files()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "gcpbench-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := files.Write(dir); err != nil {
		return err
	}
	var total int
	for _, b := range files {
		total += len(b)
	}
	fmt.Printf("cluster: %d node subnets (%d pools, %d nodes), %d firewall rules, %d routes, %d records in the pkg.dev zone; %d files, %.1f MiB of gcloud JSON\n\n",
		benchSize.Subnets, benchSize.Subnets, 2*benchSize.Subnets, len(m.Firewalls), len(m.Routes), len(m.Records["pkg-dev"]), len(files), float64(total)/(1<<20))

	// 1. Offline: the binary end to end.
	var walls, rss []float64
	fmt.Println("| round | wall (s) | peak RSS (MiB) | CPU (s) | exit |")
	fmt.Println("|---|---|---|---|---|")
	for i := 0; i < rounds; i++ {
		res, err := measure.Run(ctx, measure.Cmd{Argv: []string{bin, "gcp", "audit", image, "--from", dir, "-o", "json"}, Timeout: 2 * time.Minute})
		if err != nil {
			return err
		}
		if res.ExitCode != 3 {
			return fmt.Errorf("audit exit %d, want 3 (route: the last subnet has no Private Google Access): %s", res.ExitCode, res.Stderr)
		}
		walls = append(walls, res.Wall.Seconds())
		rss = append(rss, res.PeakRSSMiB())
		fmt.Printf("| %d | %.3f | %.1f | %.2f | %d |\n", i+1, res.Wall.Seconds(), res.PeakRSSMiB(), res.CPUSec(), res.ExitCode)
	}
	fmt.Printf("\nmedian: %.3f s wall, %.1f MiB peak RSS (targets: < 2 s, < 200 MiB)\n\n", measure.Median(walls), measure.Median(rss))

	t0 := time.Now()
	lm, err := gcpaudit.Load(os.DirFS(dir))
	if err != nil {
		return err
	}
	t1 := time.Now()
	r, err := gcpaudit.Audit(lm, dir, audit.Focus{Image: image})
	if err != nil {
		return err
	}
	t2 := time.Now()
	fmt.Printf("in process: Load %.0f ms, Audit %.0f ms (%d subnets x %d checks); %d failing, %d changes\n\n",
		ms(t1.Sub(t0)), ms(t2.Sub(t1)), len(r.Subnets), len(gcpaudit.Checks), len(r.Verdict.Failing), len(r.Changes))

	// 2. Live: API calls by kind, for clusters that differ in one dimension at a time.
	fmt.Println("| cluster | API calls | by kind |")
	fmt.Println("|---|---|---|")
	for _, s := range []synth.Size{
		benchSize,
		{Subnets: benchSize.Subnets, Rules: 5, Routes: 5, Records: 10},
		{Subnets: 30, Rules: benchSize.Rules, Routes: benchSize.Routes, Records: benchSize.Records},
		{Subnets: 1, Rules: benchSize.Rules, Routes: benchSize.Routes, Records: benchSize.Records},
	} {
		sm, err := synth.Cluster(os.DirFS(fixture), s)
		if err != nil {
			return err
		}
		srv := gcpfake.New(sm)
		srv.PageSize = 500
		start := time.Now()
		_, err = gcpaudit.Collect(ctx, gcpaudit.LiveOptions{Project: "shop-prod", Location: "us-central1", Cluster: "prod", Image: image,
			Endpoint: srv.URL, ClientOptions: srv.Options()})
		el := time.Since(start)
		calls := srv.Calls()
		srv.Close()
		if err != nil {
			return err
		}
		var kinds []string
		n := 0
		for _, k := range sortedKeys(calls) {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, calls[k]))
			n += calls[k]
		}
		fmt.Printf("| %d subnets, %d rules, %d routes, %d records | %d (%.2f s on loopback) | %s |\n", s.Subnets, s.Rules, s.Routes, s.Records, n, el.Seconds(), strings.Join(kinds, ", "))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
