// Package audittest holds what the three clouds' audit tests assert
// alike about a saved account: a missing file never fails a subnet, and
// every file reads the same in the other shapes its cloud's APIs give
// (an SDK's response, a recording, list pages). Tests only: no command
// links it.
package audittest

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
)

// Account is a saved account as a test audits it: the folder, the cloud's
// FromFolder, the focus (the image), and the files without which the
// audit cannot start.
type Account struct {
	Dir      string
	From     audit.FromFolderFunc
	Focus    audit.Focus
	Required []string
}

// Verdicts is what two audits of one account must agree on, flat for a
// diff: the verdict, each subnet's checks with their summaries, the
// changes with their commands.
func Verdicts(r *report.AuditReport) map[string]string {
	out := map[string]string{"verdict": string(r.Verdict.Status) + " " + string(r.Verdict.Condition) + " " + r.Verdict.Scope + ": " + r.Verdict.Summary}
	for _, s := range r.Subnets {
		for _, c := range s.Checks {
			out[s.ID+" "+c.ID] = string(c.Status) + ": " + c.Summary
		}
	}
	for _, c := range r.Changes {
		out["change "+c.Resource+" "+c.Check] = c.Command
	}
	return out
}

// files are the folder's JSON files, by name.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = data
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no JSON file", dir)
	}
	return out
}

func write(t *testing.T, fs map[string][]byte) string {
	t.Helper()
	d := t.TempDir()
	for name, data := range fs {
		if err := os.WriteFile(filepath.Join(d, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func sortedNames(fs map[string][]byte) []string {
	names := make([]string, 0, len(fs))
	for n := range fs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// MissingFileNeverFails removes each file of the account in turn: no
// subnet fails, a warning names the file with the command that collects
// it; a required file is a one-line error naming it (issue 42: a check
// decides from what is there, and only from it).
func MissingFileNeverFails(t *testing.T, a Account) {
	t.Helper()
	all := files(t, a.Dir)
	for _, name := range sortedNames(all) {
		t.Run(filepath.Base(a.Dir)+"/"+name, func(t *testing.T) {
			rest := map[string][]byte{}
			for n, data := range all {
				if n != name {
					rest[n] = data
				}
			}
			r, err := a.From(write(t, rest), a.Focus)
			if slices.Contains(a.Required, name) {
				if err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("FromFolder without the required %s = %v, want one line naming it", name, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromFolder without %s = %v", name, err)
			}
			for _, s := range r.Subnets {
				for _, c := range s.Checks {
					if c.Status == report.StepFail {
						t.Errorf("%s %s fails without %s: %s", s.ID, c.ID, name, c.Summary)
					}
				}
			}
			named := false
			for _, w := range r.Warnings {
				named = named || w.File == name && w.Command != ""
			}
			if !named {
				t.Errorf("no warning names %s with its command: %+v", name, r.Warnings)
			}
		})
	}
}

// Reshape rewrites one file of a folder into another shape its cloud's
// APIs give; ok false leaves the file as it is (a shape that does not
// apply to it).
type Reshape func(t *testing.T, name string, data []byte) (out []byte, ok bool)

// ReadsReshaped rewrites each file of the account in turn with reshape:
// the audit is the same as the folder's (its verdicts, and its warnings'
// files), and at least one file took the shape.
func ReadsReshaped(t *testing.T, a Account, shape string, reshape Reshape) {
	t.Helper()
	all := files(t, a.Dir)
	want, err := a.From(a.Dir, a.Focus)
	if err != nil {
		t.Fatalf("FromFolder(%s) = %v", a.Dir, err)
	}
	took := 0
	for _, name := range sortedNames(all) {
		data, ok := reshape(t, name, all[name])
		if !ok {
			continue
		}
		took++
		t.Run(shape+"/"+filepath.Base(a.Dir)+"/"+name, func(t *testing.T) {
			one := map[string][]byte{}
			for n, d := range all {
				one[n] = d
			}
			one[name] = data
			got, err := a.From(write(t, one), a.Focus)
			if err != nil {
				t.Fatalf("FromFolder with %s as %s = %v", name, shape, err)
			}
			if g, w := Verdicts(got), Verdicts(want); !reflect.DeepEqual(g, w) {
				for k := range w {
					if g[k] != w[k] {
						t.Errorf("%s as %s: %s\n got %q\nwant %q", name, shape, k, g[k], w[k])
					}
				}
				for k := range g {
					if _, ok := w[k]; !ok {
						t.Errorf("%s as %s: %s %q, not in the folder's audit", name, shape, k, g[k])
					}
				}
			}
			if g, w := warnedFiles(got), warnedFiles(want); !reflect.DeepEqual(g, w) {
				t.Errorf("%s as %s: warnings name %v, the folder's %v", name, shape, g, w)
			}
		})
	}
	if took == 0 {
		t.Errorf("no file of %s takes the shape %s", a.Dir, shape)
	}
}

func warnedFiles(r *report.AuditReport) []string {
	var out []string
	for _, w := range r.Warnings {
		if w.File != "" && !slices.Contains(out, w.File) {
			out = append(out, w.File)
		}
	}
	sort.Strings(out)
	return out
}
