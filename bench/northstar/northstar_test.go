// Package northstar measures issue 24's north-star figure on the lab
// cluster: the time from `pullpath diagnose deployment checkout -n shop` to
// an answer that names the object to change, with the cloud audit live
// (the loopback AWS fake through the real SDK's default chain), split per
// step (read, identity, walk, audit). Beside it, in the same rounds, the
// way it was done before: `pullpath aws collect` by hand, then `pullpath
// diagnose --from-aws DIR`. BenchmarkNorthStarAzure (azure_test.go) does
// the same on the AKS private-zone cluster with the ARM fake. Root, the
// lab's binaries
// (PULLPATH_CONTROLPLANE_BIN or hack/controlplane.sh):
//
//	go test ./bench/northstar/ -run '^$' -bench NorthStar -benchtime 1x -args [-rounds=3] [-pullpath=BIN]
package northstar_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/audit/aws/fakeaws"
	"github.com/pullpath/pullpath/internal/lab/cluster"
	"github.com/pullpath/pullpath/internal/lab/labtest"
	"github.com/pullpath/pullpath/internal/report"
)

var (
	rounds   = flag.Int("rounds", 3, "diagnoses per way (live, and collect then --from-aws), alternating who goes first")
	pullpath = flag.String("pullpath", "", "pullpath binary to measure (default: the one labtest.Main builds from ./cmd/pullpath)")
)

func TestMain(m *testing.M) { labtest.Main(m) }

const (
	sweepNS   = "pullpath-sweep"
	secret    = "registry-creds"
	awsFolder = "../../internal/diagnose/testdata/aws-scale-up-new-subnet"
	endpoint  = "vpce-05335335335335335" // the S3 gateway endpoint
	table     = "rtb-0c0c0c0c0c0c0c0c0"  // subnet C's route table
)

// binary is the pullpath to measure: the one labtest.Main built, when
// -pullpath is not given.
func binary(b *testing.B) string {
	if *pullpath != "" {
		return *pullpath
	}
	return labtest.Pullpath(b)
}

// timed runs bin with args and env as its whole AWS environment; it
// returns the wall time and stdout.
func timed(b *testing.B, bin string, env []string, args ...string) (time.Duration, []byte) {
	b.Helper()
	cmd := exec.CommandContext(b.Context(), bin, args...)
	cmd.Env = fakeaws.ChildEnv(env)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if _, exit := err.(*exec.ExitError); err != nil && !exit {
		b.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	if cmd.ProcessState.ExitCode() == 1 {
		b.Fatalf("%s %s: exit 1\n%s", bin, strings.Join(args, " "), errOut.String())
	}
	return took, out.Bytes()
}

// answer reads diagnose's JSON and returns its steps' durations by name,
// and whether the answer names the endpoint and the route table (a round
// that does not is a row that says so, with the audit step's reason: a
// figure, not a failure of the run).
func answer(b *testing.B, way string, out []byte) (map[string]float64, string) {
	b.Helper()
	var r report.DiagnoseReport
	if err := json.Unmarshal(out, &r); err != nil {
		b.Fatalf("%s: diagnose -o json: %v", way, err)
	}
	a := r.Answer
	named := "yes"
	if len(a.Changes) == 0 || a.Changes[0].Resource != endpoint || !strings.Contains(a.Changes[0].Command, table) {
		named = "no: " + auditReason(&r)
		b.Logf("%s: the answer's changes %+v do not name %s and %s; steps %+v", way, a.Changes, endpoint, table, r.Steps)
	}
	return stepsOf(&r), named
}

// stepsOf is a diagnosis' steps' durations by name (ms), and its total.
func stepsOf(r *report.DiagnoseReport) map[string]float64 {
	steps := map[string]float64{"total": r.DurationMS}
	for _, s := range r.Steps {
		steps[s.Name] = s.DurationMS
	}
	return steps
}

// auditReason is the audit step's status and words, cut to 200 bytes: why
// an answer did not name the object.
func auditReason(r *report.DiagnoseReport) string {
	for _, s := range r.Steps {
		if s.Name == "audit" {
			why := "audit " + string(s.Status) + ": " + s.Summary + " " + s.Reason
			if len(why) > 200 {
				why = why[:200] + "..."
			}
			return why
		}
	}
	return "no audit step"
}

type row struct {
	round                                int
	named, fnamed                        string // the answer names the endpoint and route table
	live, collect, folder                time.Duration
	read, identity, walk, audit, total   float64 // live diagnose's steps, ms
	fread, fidentity, fwalk, faudit, fto float64 // --from-aws diagnose's steps, ms
}

// BenchmarkNorthStarAWS: seed 003 on real kubelets (a scale-up puts
// node-c in subnet C, whose route table lacks the S3 gateway endpoint),
// the AWS account live from the fake. Run with -benchtime 1x: the rounds
// are -rounds, on one cluster.
func BenchmarkNorthStarAWS(b *testing.B) {
	bin := binary(b)
	c := labtest.Require(b, "scale-up-new-subnet")
	ctx := b.Context()
	if err := c.ImportImage(ctx, labtest.PullpathImage(b)); err != nil {
		b.Fatal(err)
	}
	if _, err := c.RunWorkload(ctx); err != nil {
		b.Fatalf("the scenario's story: %v", err)
	}
	labtest.WalkNamespace(b, c, sweepNS, secret)
	srv := fakeaws.New(awsFolder)
	b.Cleanup(srv.Close)
	load, _ := os.ReadFile("/proc/loadavg")

	ns, name := c.WorkloadName()
	diag := []string{"diagnose", "deployment", name, "-n", ns, "--kubeconfig", c.Kubeconfig, "-o", "json",
		"--sweep-namespace", sweepNS, "--image-for-probe", labtest.PullpathImageRef, "--node-docker-certs-dir", "/etc/containerd/docker-certs.d", "--pull-secret", secret}
	var rows []row
	b.ResetTimer()
	for i := range *rounds {
		r := row{round: i + 1}
		live := func() {
			var out []byte
			r.live, out = timed(b, bin, srv.Environ(), diag...)
			s, named := answer(b, "live", out)
			r.named = named
			r.read, r.identity, r.walk, r.audit, r.total = s["read"], s["identity"], s["walk"], s["audit"], s["total"]
		}
		byHand := func() {
			var out []byte
			// The answer from the account's saved folder. `aws collect`
			// is timed once, after the rounds: a live audit after a
			// collect against the same fake found no failing subnet
			// (3 with warnings) in two runs; left to look into.
			r.folder, out = timed(b, bin, fakeaws.NoCredentials(), append(slices.Clone(diag), "--from-aws", awsFolder)...)
			s, fnamed := answer(b, "--from-aws", out)
			r.fnamed = fnamed
			r.fread, r.fidentity, r.fwalk, r.faudit, r.fto = s["read"], s["identity"], s["walk"], s["audit"], s["total"]
		}
		if i%2 == 0 {
			live()
			byHand()
		} else {
			byHand()
			live()
		}
		rows = append(rows, r)
	}
	b.StopTimer()
	collect, _ := timed(b, bin, srv.Environ(), "aws", "collect", "--cluster", "prod", "--region", "ap-northeast-2", "--out", filepath.Join(b.TempDir(), "aws"))
	for i := range rows {
		rows[i].collect = collect
	}
	report := northStarTable(c, rows, strings.TrimSpace(string(load)))
	fmt.Print(report)
	reportMedians(b, rows)
}

// reportMedians reports the rounds' medians: the live diagnosis, the way
// by hand, and the live one's walk and audit steps.
func reportMedians(b *testing.B, rows []row) {
	med := func(f func(row) float64) float64 {
		var xs []float64
		for _, r := range rows {
			xs = append(xs, f(r))
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	b.ReportMetric(med(func(r row) float64 { return r.live.Seconds() }), "live-s")
	b.ReportMetric(med(func(r row) float64 { return (r.collect + r.folder).Seconds() }), "byhand-s")
	b.ReportMetric(med(func(r row) float64 { return r.walk / 1000 }), "walk-s")
	b.ReportMetric(med(func(r row) float64 { return r.audit / 1000 }), "audit-s")
}

func northStarTable(c *cluster.Cluster, rows []row, load string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "\nnorth star, AWS: %s on %s, %d nodes; load average at start %s\n\n", c.Scenario().Name, time.Now().UTC().Format("2006-01-02 15:04 UTC"), len(c.NodeNames()), load)
	s.WriteString("| round | live diagnose (s) | read | identity | walk | audit | names rtb + vpce | by hand: aws collect (s, once) | + diagnose --from-aws (s) | = (s) | its walk | its audit | names |\n")
	s.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	sec := func(ms float64) string { return fmt.Sprintf("%.2f", ms/1000) }
	for _, r := range rows {
		fmt.Fprintf(&s, "| %d | %.2f | %s | %s | %s | %s | %s | %.2f | %.2f | %.2f | %s | %s | %s |\n", r.round, r.live.Seconds(), sec(r.read), sec(r.identity), sec(r.walk), sec(r.audit), r.named,
			r.collect.Seconds(), r.folder.Seconds(), (r.collect + r.folder).Seconds(), sec(r.fwalk), sec(r.faudit), r.fnamed)
	}
	return s.String()
}
