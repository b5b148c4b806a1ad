package testenv

import (
	"os"
	"testing"
)

// CI reports whether the tests run under CI (CI=true), where every
// prerequisite must be present.
func CI() bool { return os.Getenv("CI") == "true" }

// Unavailable reports that a prerequisite of t is missing, with reason
// (e.g. "needs root"): under CI=true it fails t, because CI must provide
// it; elsewhere it skips t. An empty reason means nothing is missing and
// Unavailable returns.
func Unavailable(t testing.TB, reason string) {
	t.Helper()
	if reason == "" {
		return
	}
	if CI() {
		t.Fatalf("CI=true and %s", reason)
	}
	t.Skip(reason)
}
