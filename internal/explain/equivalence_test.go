package explain

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExtractImageEquivalence holds extractImage's hand-written fast path
// (fast.go) to the reference regexps of extract.go on every real message
// the package keeps: the classifier's table, the aggregated messages and
// the areas' files.
func TestExtractImageEquivalence(t *testing.T) {
	var msgs []string
	for _, tc := range classifyCases {
		msgs = append(msgs, tc.msg)
	}
	for _, tc := range aggregateCases {
		msgs = append(msgs, tc.msg)
	}
	for _, dir := range []string{"areas", filepath.Join("areas", "after")} {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			for _, c := range readAreaCases(t, f) {
				msgs = append(msgs, c.msg)
			}
		}
	}
	for _, raw := range msgs {
		m := normalize(raw)
		v := newTextView(m, strings.ToLower(m))
		if fast, re := extractImage(v), extractImageRE(m); fast != re {
			t.Errorf("extractImage(%q) = %q, the regexps say %q", short(m), fast, re)
		}
	}
}
