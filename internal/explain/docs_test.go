package explain

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update", false, "rewrite the rules table of docs/explain.md")

// rulesMarkdown renders the Rules table of docs/explain.md: one row per
// rule, in the order they are tried.
func rulesMarkdown() string {
	var b strings.Builder
	b.WriteString("| # | rule | matches | code | source of the message shape |\n|---|---|---|---|---|\n")
	quote := func(ss []string) string {
		q := make([]string, len(ss))
		for i, s := range ss {
			q[i] = "`" + s + "`"
		}
		return strings.Join(q, ", ")
	}
	for i, r := range Rules {
		var m []string
		if len(r.Any) > 0 {
			m = append(m, "any of "+quote(r.Any))
		}
		if len(r.All) > 0 {
			m = append(m, "all of "+quote(r.All))
		}
		if len(r.Not) > 0 {
			m = append(m, "none of "+quote(r.Not))
		}
		if r.Re != nil {
			m = append(m, "regexp `"+r.Re.String()+"`")
		}
		code := string(r.Code)
		if r.CodeFor != nil {
			code = fmt.Sprintf("%s / %s / %s by step", r.CodeFor(StepResolve), r.CodeFor(StepToken), r.CodeFor(StepBlob))
		}
		if r.Ambiguous {
			code += " (ambiguous)"
		}
		fmt.Fprintf(&b, "| %d | `%s` | %s | %s | %s |\n", i+1, r.ID, esc(strings.Join(m, "; ")), code, esc(r.Source))
	}
	return b.String()
}

func esc(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// TestDocsRulesTable keeps the rules table of docs/explain.md equal to
// Rules (go test ./internal/explain -run TestDocsRulesTable -update
// rewrites it).
func TestDocsRulesTable(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "explain.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	const head = "| # | rule | matches | code | source of the message shape |\n"
	start := strings.Index(doc, head)
	if start < 0 {
		t.Fatalf("%s has no rules table (a line %q)", path, strings.TrimSpace(head))
	}
	end := strings.Index(doc[start:], "\n\n")
	if end < 0 {
		t.Fatalf("%s: the rules table runs to the end of the file", path)
	}
	end += start + 1
	want := rulesMarkdown()
	if *updateDocs {
		doc = doc[:start] + want + doc[end:]
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := doc[start:end]; got != want {
		t.Errorf("%s: the rules table is out of date with Rules: run go test ./internal/explain -run TestDocsRulesTable -update", path)
	}
}
