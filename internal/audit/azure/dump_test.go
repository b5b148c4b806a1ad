package azure

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/printers"
)

func TestDump(t *testing.T) {
	dir := os.Getenv("AZDUMP")
	if dir == "" {
		t.Skip()
	}
	dirs, _ := filepath.Glob(dir)
	for _, d := range dirs {
		m, err := Load(os.DirFS(d))
		if err != nil {
			fmt.Println(d, err)
			continue
		}
		r := Audit(m, Options{Source: filepath.Base(d)})
		if f := os.Getenv("AZFMT"); f != "" {
			printers.Print(os.Stdout, f, r, printers.Options{Wide: true})
			continue
		}
		fmt.Printf("== %s exit=%d %s\n", filepath.Base(d), audit.ExitCode(r), r.Verdict.Summary)
		for _, s := range r.Subnets {
			for _, c := range s.Checks {
				if c.Status != "pass" && c.Status != "skip" {
					fmt.Printf("   %s %s %s: %s\n", s.Name, c.ID, c.Status, c.Summary)
				}
			}
		}
		for _, c := range r.Changes {
			fmt.Printf("   CHANGE %s\n      %s\n      %s\n", c.Resource, c.Action, c.Command)
		}
		for _, w := range r.Warnings {
			fmt.Printf("   WARN %s\n", w.Message)
		}
	}
}
