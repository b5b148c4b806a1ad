// Command awsbench measures `pullpath aws audit` (BENCHMARKS.md, section
// "aws audit"): an account of 300 subnets, 150 route tables, 50 endpoints,
// 400 security groups and 5,000 instances, written as the offline folder,
// audited by the real binary under GNU time (wall, peak RSS) for several
// rounds; and the live mode's API calls, counted against the loopback AWS
// server (internal/audit/aws/fakeaws), for the same account with 3 and with
// 300 subnets.
//
//	go build -o /tmp/pullpath ./cmd/pullpath
//	go run ./bench/cmd/awsbench -pullpath /tmp/pullpath [-rounds 5]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pullpath/pullpath/bench/measure"
	"github.com/pullpath/pullpath/internal/audit"
	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
	"github.com/pullpath/pullpath/internal/audit/aws/fakeaws"
	"github.com/pullpath/pullpath/internal/audit/aws/synth"
)

func main() {
	bin := flag.String("pullpath", "", "the pullpath binary to measure (required)")
	rounds := flag.Int("rounds", 5, "rounds of the offline audit")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "awsbench: want -pullpath BINARY (go build -o /tmp/pullpath ./cmd/pullpath)")
		os.Exit(1)
	}
	if err := run(*bin, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "awsbench:", err)
		os.Exit(1)
	}
}

func run(bin string, rounds int) error {
	ctx := context.Background()
	m := measure.DescribeMachine()
	fmt.Printf("machine: %s, %d cores, %d MiB, %s, load %s\n\n", m.CPUModel, m.Cores, m.MemMiB, m.Go, m.LoadAvg)
	dir, err := os.MkdirTemp("", "awsbench-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sz := synth.Benchmark
	files, err := awsaudit.WriteDir(dir, synth.Account(sz))
	if err != nil {
		return err
	}
	var total int64
	for _, f := range files {
		st, _ := os.Stat(filepath.Join(dir, f))
		total += st.Size()
	}
	fmt.Printf("account: %d subnets, %d route tables, %d endpoints, %d security groups, %d instances, %d nodegroups; %d files, %.1f MiB of CLI JSON\n\n",
		sz.Subnets, sz.RouteTables, sz.Endpoints, sz.SecurityGroups, sz.Instances, sz.Nodegroups, len(files), float64(total)/(1<<20))

	// 1. Offline: the binary end to end.
	var walls, rss []float64
	fmt.Println("| round | wall (s) | peak RSS (MiB) | CPU (s) | exit |")
	fmt.Println("|---|---|---|---|---|")
	for i := 0; i < rounds; i++ {
		res, err := measure.Run(ctx, measure.Cmd{Argv: []string{bin, "aws", "audit", "--from", dir, "-o", "json"}, Timeout: 2 * time.Minute})
		if err != nil {
			return err
		}
		if res.ExitCode != 3 {
			return fmt.Errorf("audit exit %d, want 3 (route: the synthetic account has subnets without the S3 route): %s", res.ExitCode, res.Stderr)
		}
		walls = append(walls, res.Wall.Seconds())
		rss = append(rss, res.PeakRSSMiB())
		fmt.Printf("| %d | %.3f | %.1f | %.2f | %d |\n", i+1, res.Wall.Seconds(), res.PeakRSSMiB(), res.CPUSec(), res.ExitCode)
	}
	fmt.Printf("\nmedian: %.3f s wall, %.1f MiB peak RSS (targets: < 2 s, < 200 MiB)\n\n", measure.Median(walls), measure.Median(rss))

	// In-process split: loading against auditing.
	t0 := time.Now()
	raw, err := awsaudit.LoadDir(dir)
	if err != nil {
		return err
	}
	t1 := time.Now()
	r, err := awsaudit.Audit(raw, dir, audit.Focus{})
	if err != nil {
		return err
	}
	t2 := time.Now()
	fmt.Printf("in process: LoadDir %.0f ms, Audit %.0f ms (%d subnets x %d checks); verdict %s, %d changes\n\n",
		ms(t1.Sub(t0)), ms(t2.Sub(t1)), len(r.Subnets), len(awsaudit.Checks), r.Verdict.Summary[:min(len(r.Verdict.Summary), 60)]+"...", len(r.Changes))

	// 2. Live: API calls by action for 3 and 300 subnets.
	fmt.Println("| account | API calls | by action |")
	fmt.Println("|---|---|---|")
	for _, s := range []synth.Size{{Subnets: 3, RouteTables: 3, Endpoints: sz.Endpoints, SecurityGroups: sz.SecurityGroups, Instances: sz.Instances, Nodegroups: sz.Nodegroups}, sz} {
		d, err := os.MkdirTemp("", "awsbench-live-*")
		if err != nil {
			return err
		}
		if _, err := awsaudit.WriteDir(d, synth.Account(s)); err != nil {
			return err
		}
		srv := fakeaws.New(d)
		var n atomic.Int64
		start := time.Now()
		_, err = awsaudit.CollectRaw(ctx, awsaudit.LiveOptions{Cluster: "big", EndpointURL: srv.URL, Calls: &n, Config: &aws.Config{Region: "us-east-1",
			Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}, nil
			})}})
		el := time.Since(start)
		acts := srv.Actions()
		srv.Close()
		os.RemoveAll(d)
		if err != nil {
			return err
		}
		var parts []string
		for _, k := range sortedKeys(acts) {
			parts = append(parts, fmt.Sprintf("%s %d", k, acts[k]))
		}
		fmt.Printf("| %d subnets, %d route tables, %d instances | %d (%.2f s on loopback) | %s |\n", s.Subnets, s.RouteTables, s.Instances, n.Load(), el.Seconds(), strings.Join(parts, ", "))
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
