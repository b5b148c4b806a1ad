// Command azurebench measures `pullpath azure audit` (BENCHMARKS.md,
// section "azure audit"): an AKS account of 40 pools, 40 route tables of
// 400 routes, NSGs of 200 rules and 2,000 records in privatelink.azurecr.io
// (internal/audit/azure/synth), written as the offline folder and audited
// by the real binary under GNU time (wall, peak RSS) for several rounds;
// and the live mode's ARM requests, counted by the loopback ARM server
// (internal/audit/azure/armfake) for accounts that differ in pools, routes,
// rules and records, to show what the calls grow with.
//
//	go build -o /tmp/pullpath ./cmd/pullpath
//	go run ./bench/cmd/azurebench -pullpath /tmp/pullpath [-rounds 5]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pullpath/pullpath/bench/measure"
	"github.com/pullpath/pullpath/internal/audit"
	azaudit "github.com/pullpath/pullpath/internal/audit/azure"
	"github.com/pullpath/pullpath/internal/audit/azure/armfake"
	"github.com/pullpath/pullpath/internal/audit/azure/synth"
)

const fixture = "internal/audit/azure/testdata/valid-healthy"

func main() {
	bin := flag.String("pullpath", "", "the pullpath binary to measure (required)")
	rounds := flag.Int("rounds", 5, "rounds of the offline audit")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "azurebench: want -pullpath BINARY (go build -o /tmp/pullpath ./cmd/pullpath)")
		os.Exit(1)
	}
	if err := run(*bin, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "azurebench:", err)
		os.Exit(1)
	}
}

func run(bin string, rounds int) error {
	ctx := context.Background()
	mc := measure.DescribeMachine()
	fmt.Printf("machine: %s, %d cores, %d MiB, %s, load %s\n\n", mc.CPUModel, mc.Cores, mc.MemMiB, mc.Go, mc.LoadAvg)
	sz := synth.Benchmark
	m, err := synth.Account(os.DirFS(fixture), sz)
	if err != nil {
		return fmt.Errorf("%v (run from the repository's root)", err)
	}
	files, err := m.Files()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "azurebench-*")
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
	fmt.Printf("account: %d pools (subnets), %d route tables of %d routes, %d NSGs of %d rules (+ defaults), %d records in the zone; %d files, %.1f MiB of CLI JSON\n\n",
		sz.Pools, sz.Pools, sz.Routes, sz.Pools, sz.Rules, sz.Records+3, len(files), float64(total)/(1<<20))

	// 1. Offline: the binary end to end.
	var walls, rss []float64
	fmt.Println("| round | wall (s) | peak RSS (MiB) | CPU (s) | exit |")
	fmt.Println("|---|---|---|---|---|")
	for i := 0; i < rounds; i++ {
		res, err := measure.Run(ctx, measure.Cmd{Argv: []string{bin, "azure", "audit", "--from", dir, "-o", "json"}, Timeout: 2 * time.Minute})
		if err != nil {
			return err
		}
		if res.ExitCode != 3 {
			return fmt.Errorf("audit exit %d, want 3 (route: the last pool's route table stops BGP propagation): %s", res.ExitCode, res.Stderr)
		}
		walls = append(walls, res.Wall.Seconds())
		rss = append(rss, res.PeakRSSMiB())
		fmt.Printf("| %d | %.3f | %.1f | %.2f | %d |\n", i+1, res.Wall.Seconds(), res.PeakRSSMiB(), res.CPUSec(), res.ExitCode)
	}
	fmt.Printf("\nmedian: %.3f s wall, %.1f MiB peak RSS (targets: < 2 s, < 200 MiB)\n\n", measure.Median(walls), measure.Median(rss))

	t0 := time.Now()
	lm, err := azaudit.Load(os.DirFS(dir))
	if err != nil {
		return err
	}
	t1 := time.Now()
	r := azaudit.Audit(lm, dir, audit.Focus{})
	t2 := time.Now()
	fmt.Printf("in process: Load %.0f ms, Audit %.0f ms (%d subnets x %d checks); %d failing, %d changes\n\n",
		ms(t1.Sub(t0)), ms(t2.Sub(t1)), len(r.Subnets), len(azaudit.Checks), len(r.Verdict.Failing), len(r.Changes))

	// 2. Live: ARM requests by kind, for accounts that differ in one dimension at a time.
	fmt.Println("| account | ARM requests | by kind |")
	fmt.Println("|---|---|---|")
	for _, s := range []synth.Size{
		sz,
		{Pools: sz.Pools, Routes: 10, Rules: 5, Records: 10},
		{Pools: 10, Routes: sz.Routes, Rules: sz.Rules, Records: sz.Records},
		{Pools: 1, Routes: sz.Routes, Rules: sz.Rules, Records: sz.Records},
	} {
		am, err := synth.Account(os.DirFS(fixture), s)
		if err != nil {
			return err
		}
		srv := armfake.New(am)
		srv.PageSize = 100 // ARM's usual page
		start := time.Now()
		id := *am.Cluster.ID
		parts := strings.Split(strings.Trim(id, "/"), "/")
		var requests atomic.Int64
		_, err = azaudit.Collect(ctx, azaudit.LiveOptions{Subscription: parts[1], ResourceGroup: parts[3], Cluster: *am.Cluster.Name,
			Credential: armfake.Credential{}, ClientOptions: srv.ClientOptions(), Calls: &requests})
		el := time.Since(start)
		calls := srv.Calls()
		srv.Close()
		if err != nil {
			return err
		}
		var kinds []string
		for _, k := range sortedKeys(calls) {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, calls[k]))
		}
		fmt.Printf("| %d pools, %d routes/table, %d rules/NSG, %d records | %d (%.2f s on loopback) | %s |\n", s.Pools, s.Routes, s.Rules, s.Records, requests.Load(), el.Seconds(), strings.Join(kinds, ", "))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func sortedKeys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
