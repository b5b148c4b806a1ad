package exitcode

import (
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

func TestTable(t *testing.T) {
	seen := map[int]bool{}
	conds := map[verdict.Condition]bool{}
	for _, r := range Table {
		if seen[r.Code] {
			t.Errorf("exit code %d is in the table twice", r.Code)
		}
		seen[r.Code] = true
		if r.Meaning == "" {
			t.Errorf("exit code %d has no meaning", r.Code)
		}
		if r.Condition != "" {
			conds[r.Condition] = true
		}
	}
	for _, c := range verdict.Conditions {
		if !conds[c] {
			t.Errorf("condition %s has no exit code", c)
		}
		if n := For(c); n < 3 || n == Mismatch {
			t.Errorf("For(%s) = %d, want a condition's own code (3 and up, not %d)", c, n, Mismatch)
		}
	}
	for _, c := range []verdict.Condition{verdict.ConditionNone, "nonsense"} {
		if n := For(c); n != Other {
			t.Errorf("For(%q) = %d, want %d", c, n, Other)
		}
	}
}

func TestForVerdictAndFailures(t *testing.T) {
	if n := ForVerdict(verdict.Verdict{Status: verdict.StatusOK, Condition: verdict.ConditionDNS}); n != OK {
		t.Errorf("ForVerdict(ok) = %d, want 0", n)
	}
	if n := ForVerdict(verdict.Verdict{Status: verdict.StatusFail, Condition: verdict.ConditionRoute}); n != 3 {
		t.Errorf("ForVerdict(fail route) = %d, want 3", n)
	}
	if n := ForVerdict(verdict.Verdict{Status: verdict.StatusFail}); n != Other {
		t.Errorf("ForVerdict(fail, no condition) = %d, want %d", n, Other)
	}
	if n := ForFailures(0, verdict.ConditionDNS); n != OK {
		t.Errorf("ForFailures(0, dns) = %d, want 0", n)
	}
	if n := ForFailures(2, verdict.ConditionTLSIdentity); n != 6 {
		t.Errorf("ForFailures(2, tls-identity) = %d, want 6", n)
	}
	if n := ForFailures(1, ""); n != Other {
		t.Errorf("ForFailures(1, none) = %d, want %d", n, Other)
	}
}
