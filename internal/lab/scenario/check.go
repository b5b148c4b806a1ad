package scenario

import (
	"fmt"

	"github.com/pullpath/pullpath/internal/verdict"
)

// Check compares a verdict and its warnings with a scenario's expect block
// and returns one line per difference ("condition: want route, got dns").
func Check(e *Expect, v verdict.Verdict, warnings []verdict.Code) []string {
	if e == nil {
		return nil
	}
	var out []string
	cmp := func(field, want, got string) {
		if want != "" && want != got {
			if got == "" {
				got = "nothing"
			}
			out = append(out, fmt.Sprintf("%s: want %s, got %s", field, want, got))
		}
	}
	cmp("status", string(e.Status), string(v.Status))
	cmp("condition", string(e.Condition), string(v.Condition))
	cmp("cause", string(e.Cause), string(v.Cause))
	cmp("stage", string(e.Stage), string(v.Stage))
	cmp("code", string(e.Code), string(v.Code))
	cmp("role", string(e.Role), string(v.Role))
	cmp("endpoint", e.Endpoint, v.Endpoint)
	have := map[verdict.Code]bool{}
	for _, w := range warnings {
		have[w] = true
	}
	for _, w := range e.Warnings {
		if !have[w] {
			out = append(out, fmt.Sprintf("warnings: want %s among %v", w, warnings))
		}
	}
	return out
}
