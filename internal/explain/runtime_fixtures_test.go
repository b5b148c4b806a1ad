package explain

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClassifyRuntimeFixtures runs Classify on every message the real
// container runtime produced in a lab (internal/crirun and the lab's
// runtime hook record them in testdata/runtime) and checks the reading the
// fixture's "# expect:" line gives (stage=, cause=, code=, condition=; a
// key left out is not checked).
func TestClassifyRuntimeFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "runtime", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no runtime fixtures in testdata/runtime (go test ./internal/crirun -run TestPullRealRuntime -update records them)")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			fx := readRuntimeFixture(t, file)
			if len(fx.expect) == 0 {
				t.Fatalf("%s has no \"# expect:\" line", file)
			}
			c := Classify(fx.message)
			got := map[string]string{
				"stage":     string(c.Stage),
				"cause":     string(c.Cause),
				"code":      string(c.Code),
				"condition": string(c.Condition),
			}
			for k, want := range fx.expect {
				g, ok := got[k]
				if !ok {
					t.Fatalf("%s: unknown key %q in # expect:, want stage, cause, code or condition", file, k)
				}
				if g != want {
					t.Errorf("Classify(%s [%s]).%s = %q, want %q (rule %q)\n  message: %s", filepath.Base(file), fx.runtime, k, g, want, c.Rule, fx.message)
				}
			}
			if strings.HasPrefix(filepath.Base(file), "valid-") && !c.Failed() {
				t.Errorf("Classify(%s) does not see a pull failure (rule %q)", filepath.Base(file), c.Rule)
			}
		})
	}
}

type runtimeFixture struct {
	runtime string
	expect  map[string]string
	message string
}

// readRuntimeFixture reads "# key: value" header lines, then the message
// (every other line, joined by newlines).
func readRuntimeFixture(t *testing.T, file string) runtimeFixture {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fx := runtimeFixture{expect: map[string]string{}}
	var msg []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "#") {
			msg = append(msg, line)
			continue
		}
		key, val, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
		switch strings.TrimSpace(key) {
		case "runtime":
			fx.runtime = strings.TrimSpace(val)
		case "expect":
			for _, kv := range strings.Fields(val) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("%s: # expect: item %q, want key=value", file, kv)
				}
				fx.expect[k] = v
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	fx.message = strings.TrimSpace(strings.Join(msg, "\n"))
	if fx.message == "" {
		t.Fatalf("%s holds no message", file)
	}
	return fx
}
