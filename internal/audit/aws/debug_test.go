package aws

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestDebugDump(t *testing.T) {
	if os.Getenv("DUMP") == "" {
		t.Skip()
	}
	dirs, _ := filepath.Glob("testdata/*-*")
	for _, d := range dirs {
		if st, _ := os.Stat(d); !st.IsDir() {
			continue
		}
		raw, err := LoadDir(d)
		if err != nil {
			fmt.Println(d, "ERR", err)
			continue
		}
		r, err := Audit(raw, Options{Source: d})
		if err != nil {
			fmt.Println(d, "ERR", err)
			continue
		}
		fmt.Printf("== %s: %s %s %s: %s\n", d, r.Verdict.Status, r.Verdict.Scope, r.Verdict.Condition, r.Verdict.Summary)
		for _, s := range r.Subnets {
			for _, c := range s.Checks {
				if c.Status == "fail" || c.Status == "warn" {
					fmt.Printf("   %s %s %s: %s %v\n", s.ID, c.ID, c.Status, c.Summary, c.Resources)
				}
			}
		}
		for _, ch := range r.Changes {
			fmt.Printf("   change %s: %s | %s %v\n", ch.Resource, ch.Action, ch.Command, ch.Subnets)
		}
		for _, w := range r.Warnings {
			fmt.Printf("   warning %s: %s\n", w.File, w.Message)
		}
	}
}
