package depguard

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// packageDirs are the folders under cmd/ and internal/ that hold Go files
// (testdata left out), relative to root.
func packageDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	for _, top := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") {
				rel, _ := filepath.Rel(root, filepath.Dir(p))
				if rel = filepath.ToSlash(rel); !slices.Contains(dirs, rel) {
					dirs = append(dirs, rel)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dirs
}

// unnamed are the dirs the package map does not name at a line's start
// ("internal/foo/   what it does").
func unnamed(doc string, dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(d) + `/\s`).MatchString(doc) {
			out = append(out, d)
		}
	}
	return out
}

// docs/architecture.md names every package: a new package directory
// without its line there fails here.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	dirs := packageDirs(t, root)
	if len(dirs) < 40 || !slices.Contains(dirs, "internal/depguard") {
		t.Fatalf("found %d package folders (%v): want every folder under cmd/ and internal/", len(dirs), dirs)
	}
	if miss := unnamed(string(b), dirs); len(miss) > 0 {
		t.Errorf("docs/architecture.md does not name %v: add a line \"DIR/   what it does\" to its package map", miss)
	}
	// The check can fail: a map without one of the lines misses it.
	cut := regexp.MustCompile(`(?m)^internal/units/.*\n`).ReplaceAllString(string(b), "")
	if miss := unnamed(cut, dirs); !slices.Equal(miss, []string{"internal/units"}) {
		t.Errorf("a map without internal/units' line misses %v, want [internal/units]", miss)
	}
}
