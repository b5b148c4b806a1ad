package explain

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// runtimeCase is a message recorded from the real containerd 1.6 in the
// lab (testdata/runtime/*.txt, written by internal/crirun), with the
// verdict its scenario expects in a "# expect:" line.
type runtimeCase struct {
	file   string
	msg    string
	expect map[string]string
}

func runtimeCases(t *testing.T) []runtimeCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "runtime", "valid-*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []runtimeCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rc := runtimeCase{file: filepath.Base(f), expect: map[string]string{}}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "# expect:"); ok {
				for _, kv := range strings.Fields(rest) {
					if k, v, ok := strings.Cut(kv, "="); ok {
						rc.expect[k] = v
					}
				}
				continue
			}
			if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
				continue
			}
			rc.msg = line
		}
		if rc.msg != "" && rc.expect["code"] != "" {
			out = append(out, rc)
		}
	}
	return out
}

// TestAccuracy measures the classifier on the whole collected set (the
// table of real message shapes, the lab's runtime recordings and the real
// multi-attempt messages of attempts_test.go) per
// expected cause, and prints the table docs/explain.md quotes:
//
//	go test ./internal/explain -run TestAccuracy -v
func TestAccuracy(t *testing.T) {
	type tally struct{ n, code, cause int }
	by := map[string]*tally{}
	add := func(wantCode verdict.Code, got Classification) {
		cause := string(verdict.CauseOK)
		if info, ok := verdict.Lookup(wantCode); ok {
			cause = string(info.Cause)
		}
		if by[cause] == nil {
			by[cause] = &tally{}
		}
		tl := by[cause]
		tl.n++
		if got.Code == wantCode {
			tl.code++
		}
		gotCause := string(got.Cause)
		if got.Code == verdict.OK {
			gotCause = string(verdict.CauseOK)
		}
		if gotCause == cause {
			tl.cause++
		}
	}
	for _, tc := range classifyCases {
		add(tc.want.Code, Classify(tc.msg))
	}
	for _, rc := range runtimeCases(t) {
		add(verdict.Code(rc.expect["code"]), Classify(rc.msg))
	}
	for _, tc := range aggregateCases {
		add(tc.code, Classify(tc.msg))
	}
	causes := make([]string, 0, len(by))
	for c := range by {
		causes = append(causes, c)
	}
	sort.Strings(causes)
	var b strings.Builder
	fmt.Fprintf(&b, "| cause | messages | code right | cause right |\n|---|---|---|---|\n")
	total := tally{}
	for _, c := range causes {
		tl := by[c]
		total.n += tl.n
		total.code += tl.code
		total.cause += tl.cause
		fmt.Fprintf(&b, "| %s | %d | %d (%.0f%%) | %d (%.0f%%) |\n", c, tl.n, tl.code, pct(tl.code, tl.n), tl.cause, pct(tl.cause, tl.n))
	}
	fmt.Fprintf(&b, "| **all** | %d | %d (%.0f%%) | %d (%.0f%%) |\n", total.n, total.code, pct(total.code, total.n), total.cause, pct(total.cause, total.n))
	t.Logf("classifier accuracy on the collected set:\n%s", b.String())
	if total.n == 0 || pct(total.code, total.n) < 95 {
		t.Errorf("code accuracy %.1f%% on %d messages, want >= 95%%", pct(total.code, total.n), total.n)
	}
}

func pct(a, n int) float64 {
	if n == 0 {
		return 0
	}
	return 100 * float64(a) / float64(n)
}

func BenchmarkClassify(b *testing.B) {
	msgs := make([]string, len(classifyCases))
	for i, tc := range classifyCases {
		msgs[i] = tc.msg
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Classify(msgs[i%len(msgs)])
	}
}

// TestHeldOut measures the classifier on messages it was not written
// against (testdata/valid-heldout.txt) and prints the per-cause table;
// it fails only if the figure falls below 60%.
func TestHeldOut(t *testing.T) {
	for _, f := range []string{"valid-heldout.txt", "valid-heldout-2.txt", "valid-heldout-3.txt"} {
		t.Run(f, func(t *testing.T) { heldOut(t, f) })
	}
}

func heldOut(t *testing.T, file string) {
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	type tally struct{ n, code int }
	by := map[string]*tally{}
	total := tally{}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		codeS, msg, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("held-out line without a tab: %q", line)
		}
		want := verdict.Code(codeS)
		info, _ := verdict.Lookup(want)
		cause := string(info.Cause)
		if by[cause] == nil {
			by[cause] = &tally{}
		}
		got := Classify(msg)
		gotCode := got.Code
		if !got.Failed() && want == verdict.Other {
			gotCode = verdict.Other // "not a pull failure" is right for these
		}
		by[cause].n++
		total.n++
		if gotCode == want {
			by[cause].code++
			total.code++
		} else {
			t.Logf("held-out miss: want %s, got %s (rule %q): %s", want, got.Code, got.Rule, short(msg))
		}
	}
	causes := make([]string, 0, len(by))
	for c := range by {
		causes = append(causes, c)
	}
	sort.Strings(causes)
	var sb strings.Builder
	fmt.Fprintf(&sb, "| cause (held-out) | messages | code right |\n|---|---|---|\n")
	for _, c := range causes {
		fmt.Fprintf(&sb, "| %s | %d | %d (%.0f%%) |\n", c, by[c].n, by[c].code, pct(by[c].code, by[c].n))
	}
	fmt.Fprintf(&sb, "| **all** | %d | %d (%.0f%%) |\n", total.n, total.code, pct(total.code, total.n))
	t.Logf("classifier accuracy on the held-out set:\n%s", sb.String())
	if pct(total.code, total.n) < 60 {
		t.Errorf("held-out accuracy %.0f%%, want >= 60%%", pct(total.code, total.n))
	}
}
